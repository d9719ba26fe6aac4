"""Approve with changes on a real `python -m bot` through the console's JSON API, sent as the
page sends it: an edit names every argument (an untouched one as asked)."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.e2e import _edits as edits
from tests.e2e._client import APPROVE, NAME, OPERATOR, ConsoleClient
from tests.e2e._server import BotServer, StartBot, json_lines

pytestmark = pytest.mark.e2e

CID = "edits"


async def console(
    start_bot: StartBot, http: aiohttp.ClientSession, **env: str
) -> tuple[BotServer, ConsoleClient]:
    bot = await start_bot(**OPERATOR, **env)
    return bot, ConsoleClient(http, bot.url)


def edit(question: dict[str, Any], **typed: str) -> dict[str, Any]:
    """What the page sends for Approve with changes: each field's text as asked, or as typed."""
    fields = question["payload"]["edit_fields"]
    arguments = {f["key"]: typed.get(f["key"], f["original"]) for f in fields}
    return {"decision": "edit", "arguments": arguments, "comment": ""}


async def editable_approval(client: ConsoleClient) -> dict[str, Any]:
    """The approval, with a field per argument holding its value."""
    _, approval = await client.approval(CID)
    fields = {f["key"]: f["original"] for f in approval["payload"]["edit_fields"]}
    assert fields == {"service": "web", "environment": "staging"}
    assert approval["payload"]["allow"] == ["approve", "reject", "edit", "respond"]
    return approval


async def closed(client: ConsoleClient, interrupt_id: str) -> dict[str, Any]:
    """The question once the run has finished, as the feed shows it."""
    run = await client.finished(CID)
    return next(q for q in run["questions"] if q["interrupt_id"] == interrupt_id)


def completions(bot: BotServer) -> int:
    """How many times a run completed, over every start of the process (its log)."""
    return len([r for r in json_lines(bot.log_text()) if r.get("event") == "completed"])


async def test_an_edit_deploys_the_edited_environment_once_and_says_what_changed(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """The environment typed over: the deploy runs there, once, and the closed question
    says who approved with which changes."""
    bot, client = await console(start_bot, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await editable_approval(client)

    await client.answer_ok(approval["token"], edit(approval, environment="production"))
    run = await client.finished(CID)
    assert run["final_text"].startswith(edits.TO_PRODUCTION), run
    question = await closed(client, approval["interrupt_id"])
    assert question["status"] == "answered" and question["closed_by"] == NAME
    assert question["closed_text"].startswith(f"Approved by {NAME} with changes at ")
    assert question["closed_text"].endswith(f": {edits.CHANGES}")
    assert question["answer"]["arguments"] == {"service": "web", "environment": "production"}
    await bot.terminate()
    assert completions(bot) == 1


async def test_an_edit_survives_a_sigkill_right_after_its_reply_and_deploys_once(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Killed as soon as the edit is acknowledged: the next start resumes the run with the
    edited arguments, and it completes once."""
    bot, client = await console(
        start_bot, http, BOT_ALLOW=edits.EVERY_WAY, BOT_LEASE_SECONDS="2", BOT_SWEEP_SECONDS="0.5"
    )
    approval = await editable_approval(client)
    await client.answer_ok(approval["token"], edit(approval, environment="production"))
    bot.kill()
    await bot.restart()
    run = await client.finished(CID)
    assert run["final_text"].startswith(edits.TO_PRODUCTION), run
    await bot.terminate()
    assert completions(bot) == 1


async def test_respond_is_read_by_the_model_and_nothing_deploys(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Respond: the agent quotes the message and does not deploy."""
    _, client = await console(start_bot, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await editable_approval(client)

    await client.answer_ok(approval["token"], {"decision": "respond", "message": edits.WAIT})
    run = await client.finished(CID)
    assert run["final_text"] == edits.RESPONDED
    question = await closed(client, approval["interrupt_id"])
    assert question["closed_text"].startswith(f"Answered instead of run by {NAME} at ")
    assert question["closed_text"].endswith(f": {edits.WAIT}")


async def test_an_emptied_required_argument_is_refused_with_the_field_named(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """An emptied environment: 422 naming that field, the question still open with the same
    token; a valid edit then runs."""
    _, client = await console(start_bot, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await editable_approval(client)

    status, refused = await client.answer(approval["token"], edit(approval, environment=""))
    assert status == 422 and refused["ok"] is False, refused
    assert "is required" in refused["fields"]["arguments.environment"]
    still = await client.outstanding(CID, "approval")
    assert still["interrupt_id"] == approval["interrupt_id"]

    await client.answer_ok(still["token"], edit(still, environment="production"))
    assert (await client.finished(CID))["final_text"].startswith(edits.TO_PRODUCTION)


async def test_a_decision_the_deployment_does_not_allow_is_refused(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """By default the page gets no edit fields, and a forged edit is refused naming the
    decision; the question stays open and a plain approve still deploys staging."""
    _, client = await console(start_bot, http)
    _, approval = await client.approval(CID)
    assert "edit_fields" not in approval["payload"] and "allow" not in approval["payload"]

    forged = {"decision": "edit", "arguments": edits.FORGED_ARGUMENTS, "comment": ""}
    status, refused = await client.answer(approval["token"], forged)
    assert status == 422 and refused["ok"] is False, refused
    assert edits.NOT_ALLOWED in refused["fields"]["decision"]
    still = await client.outstanding(CID, "approval")
    assert still["interrupt_id"] == approval["interrupt_id"]

    await client.answer_ok(still["token"], APPROVE)
    assert (await client.finished(CID))["final_text"].startswith(edits.TO_STAGING)
