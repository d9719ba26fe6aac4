"""Approve with changes on a real `python -m bot` answering Slack (the loopback Web API)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from tests.e2e import _edits as edits
from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, SlackDriver, slack_bot, text_of
from tests.fakes.slack_api import FakeSlack, buttons

pytestmark = pytest.mark.e2e


async def driver(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession, **env: str
) -> SlackDriver:
    return SlackDriver(http, await slack_bot(start_bot, fake, **env), fake)


async def edit_modal(slack: SlackDriver, fake: FakeSlack) -> dict[str, object]:
    """Deploy web, pick staging, and open the approval's Edit… modal."""
    approval = await slack.approval()
    labels = [b["text"]["text"] for b in buttons(approval.args)]
    assert labels == ["Approve", "Reject…", "Edit…", "Respond…"]
    status, _ = await slack.click(approval, "Edit…")
    assert status == 200
    view: dict[str, object] = (await fake.wait_for("views.open"))[0].args["view"]
    return view


def typed(**values: str) -> dict[str, object]:
    return {
        f"e:{name}": {"answer": {"type": "plain_text_input", "value": value}}
        for name, value in values.items()
    }


async def test_an_edit_deploys_the_edited_environment_and_says_what_changed(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Edit… is prefilled; an empty required field is refused under it; the edit then runs
    the deploy with the edited arguments and the message shows the diff."""
    slack = await driver(start_bot, fake, http, BOT_ALLOW=edits.EVERY_WAY)
    view = await edit_modal(slack, fake)
    blocks: list[dict[str, Any]] = view["blocks"]  # type: ignore[assignment]
    inputs = {b["block_id"]: b for b in blocks if b["type"] == "input"}
    assert inputs["e:environment"]["element"]["initial_value"] == "staging"
    status, body = await slack.submit(view, typed(service="web", environment=""))
    refused = json.loads(body)
    assert status == 200 and refused["response_action"] == "errors"
    assert "is required" in refused["errors"]["e:environment"]
    assert not [c for c in fake.of("chat.update") if "with changes" in text_of(c)]

    status, body = await slack.submit(view, typed(service="web", environment="production"))
    assert status == 200 and body == ""
    approval = await slack.question(2)
    edited = (await slack.edits_of(approval))[0]
    assert f"Approved by <@{ALICE}> with changes" in text_of(edited)
    assert edits.CHANGES in text_of(edited)
    await slack.reply(edits.TO_PRODUCTION)


async def test_an_edit_survives_a_sigkill_before_its_resume_and_deploys_once(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Killed right after the edit's ack: the next start resumes it, with the edited
    arguments, and the deploy is reported once."""
    slack = await driver(
        start_bot,
        fake,
        http,
        BOT_ALLOW=edits.EVERY_WAY,
        BOT_LEASE_SECONDS="2",
        BOT_SWEEP_SECONDS="0.5",
    )
    view = await edit_modal(slack, fake)
    status, _ = await slack.submit(view, typed(service="web", environment="production"))
    assert status == 200
    slack.bot.kill()
    await slack.bot.restart()
    await slack.reply(edits.TO_PRODUCTION)
    # Settled: the run is complete once its final reply is posted; no second deploy follows.
    await slack.bot.terminate()
    deploys = [c for c in fake.of("chat.postMessage") if "Deployed web" in str(c.args)]
    assert len(deploys) == 1


async def test_respond_is_read_by_the_model_and_nothing_deploys(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Respond… sends a message the agent reads in place of the deploy."""
    slack = await driver(start_bot, fake, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await slack.approval()
    await slack.click(approval, "Respond…")
    view = (await fake.wait_for("views.open"))[0].args["view"]
    message = {"message": {"answer": {"type": "plain_text_input", "value": edits.WAIT}}}
    status, body = await slack.submit(view, message)
    assert status == 200 and body == ""
    await slack.reply(edits.RESPONDED)
    assert not [c for c in fake.of("chat.postMessage") if "Deployed web" in str(c.args)]


async def test_a_decision_the_deployment_does_not_allow_is_refused(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """By default there is no Edit…, and a forged edit on the Approve button is refused;
    the question stays open and a plain approve still works."""
    slack = await driver(start_bot, fake, http)
    approval = await slack.approval()
    assert [b["text"]["text"] for b in buttons(approval.args)] == ["Approve", "Reject…"]
    approve = next(b for b in buttons(approval.args) if b["text"]["text"] == "Approve")
    token = json.loads(approve["value"])["t"]
    forged = json.dumps(
        {"t": token, "a": {"decision": "edit", "arguments": edits.FORGED_ARGUMENTS}}
    )
    status, _ = await slack.click(approval, "Approve", value=forged)
    assert status == 200
    (told,) = await slack.ephemeral(ALICE)
    assert edits.NOT_ALLOWED in str(told.args["text"])
    await slack.click(approval, "Approve")
    await slack.reply(edits.TO_STAGING)
