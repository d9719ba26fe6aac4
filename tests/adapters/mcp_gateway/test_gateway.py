"""The gateway in front of a real upstream MCP server, approvals answered on the console."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from mcp import Client
from mcp.types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from adapters.mcp_gateway import Caller
from bot.service.answering.outcomes import Counted, Redeemed, Responder
from bot.service.running.runs import RUN_SERVICE
from tests import waiting
from tests.adapters.mcp_gateway._rig import Rig, deploys, rig, text_of
from tests.doors._doors import Logs
from tests.e2e._client import NAME
from tests.e2e._server import free_port
from tests.loopback import serving

DEPLOY = {"service": "web", "version": "1.5"}
APPROVE_RULE = """
[[rules]]
tools = "ops__deploy"
action = "approve"
allow = ["approve", "reject", "edit", "respond"]
"""


async def test_the_upstream_tools_are_offered_prefixed_with_annotations_kept(
    tmp_path: Path,
) -> None:
    """tools/list: ops__<tool>, the upstream's description, schema and annotations."""
    async with rig(tmp_path) as r:
        listed = {tool.name: tool for tool in (await r.client.list_tools()).tools}
    assert {"ops__status", "ops__deploy", "ops__restart", "ops__purge_cache"} <= set(listed)
    assert all(name.startswith("ops__") for name in listed)
    deploy = listed["ops__deploy"]
    assert deploy.annotations is not None and deploy.annotations.destructive_hint is True
    assert deploy.description == "Deploy a version of a service (destructive)."
    assert set(deploy.input_schema["properties"]) == {"service", "version"}


async def test_a_read_only_tool_no_rule_names_is_forwarded_at_once(tmp_path: Path) -> None:
    """readOnlyHint: true and no rule: the upstream's result, no question asked."""
    async with rig(tmp_path) as r:
        result = await r.client.call_tool("ops__status", {"service": "web"})
        page = await r.bridge.list()
    assert not result.is_error and text_of(result) == "web is up"
    assert page.data == []


async def test_an_unannotated_tool_no_rule_names_waits_for_approval(tmp_path: Path) -> None:
    """No annotations: asked about, not forwarded; approve runs it."""
    async with rig(tmp_path) as r:
        call = r.call("ops__restart", {"service": "web"})
        await r.answer({"decision": "approve"})
        result = await call
    assert not result.is_error and text_of(result) == "restarted web"


async def test_deny_refuses_with_the_rules_sentence(tmp_path: Path) -> None:
    """action deny: a tool error with the reason; the upstream never runs."""
    rules = '[[rules]]\ntools = "ops__dep*"\naction = "deny"\nreason = "Deploys go through CI."\n'
    async with rig(tmp_path, rules) as r:
        result = await r.client.call_tool("ops__deploy", DEPLOY)
    assert result.is_error and text_of(result) == "Deploys go through CI."
    assert deploys(tmp_path) == []


async def test_allow_forwards_a_destructive_tool_unasked(tmp_path: Path) -> None:
    """action allow beats the annotations: forwarded at once, run once."""
    async with rig(tmp_path, '[[rules]]\ntools = "ops__*"\naction = "allow"\n') as r:
        result = await r.client.call_tool("ops__deploy", DEPLOY)
    assert text_of(result) == "deployed web 1.5"
    assert deploys(tmp_path) == ["deploy web 1.5"]


async def test_approve_runs_the_call_once_and_returns_the_upstreams_result(
    tmp_path: Path,
) -> None:
    """Approve: forwarded once; the question named the tool, its upstream and the caller."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        call = r.call("ops__deploy", DEPLOY)
        await r.answer({"decision": "approve"})
        result = await call
        asked = (await r.bridge.list()).data[0]
        with sqlite3.connect(r.door.db) as db:
            audited = db.execute(
                "SELECT kind, actor FROM audit WHERE interrupt_id = ?", (asked.id,)
            ).fetchall()
    assert not result.is_error and text_of(result) == "deployed web 1.5"
    assert deploys(tmp_path) == ["deploy web 1.5"]
    assert asked.payload["action"] == "ops__deploy"
    assert asked.payload["arguments"] == DEPLOY
    assert "test-agent (key ci)" in asked.payload["summary"]
    assert "MCP server ops" in asked.payload["summary"]
    # The gated call is in the audit with who decided (the console's operator).
    assert any(actor.endswith(NAME) for _, actor in audited), audited


async def test_edit_runs_the_call_with_the_edited_arguments(tmp_path: Path) -> None:
    """Edit: the upstream gets what the person approved, not what the model asked."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        call = r.call("ops__deploy", DEPLOY)
        edited = {"decision": "edit", "arguments": {"service": "web", "version": "1.4"}}
        await r.answer(edited)
        result = await call
    assert text_of(result) == "deployed web 1.4"
    assert deploys(tmp_path) == ["deploy web 1.4"]


async def test_reject_is_a_tool_error_naming_who_and_why(tmp_path: Path) -> None:
    """Reject: is_error with the comment; the upstream never runs."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        call = r.call("ops__deploy", DEPLOY)
        await r.answer({"decision": "reject", "comment": "freeze until Monday"})
        result = await call
    assert result.is_error
    assert "rejected" in text_of(result) and "freeze until Monday" in text_of(result)
    assert deploys(tmp_path) == []


async def test_respond_is_the_persons_message_as_the_result(tmp_path: Path) -> None:
    """Respond: the message in the tool's place; the upstream never runs."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        call = r.call("ops__deploy", DEPLOY)
        await r.answer({"decision": "respond", "message": "Use the canary first."})
        result = await call
    assert text_of(result) == "Use the canary first."
    assert deploys(tmp_path) == []


async def test_a_wait_past_the_bound_is_pending_and_a_repeat_attaches_to_the_question(
    tmp_path: Path,
) -> None:
    """Still pending after wait_seconds: an error saying so; the same call again waits for the
    same question, and after the approval runs once; a later identical call asks anew."""
    async with rig(tmp_path, APPROVE_RULE, wait_seconds=1) as r:
        first = await r.client.call_tool("ops__deploy", DEPLOY)
        pending = (await r.bridge.list()).data
        again = r.call("ops__deploy", DEPLOY)
        await r.answer({"decision": "approve"})
        result = await again
        questions = (await r.bridge.list()).data
        later = await r.client.call_tool("ops__deploy", DEPLOY)
        after = (await r.bridge.list()).data
    assert first.is_error and "waiting for approval" in text_of(first)
    assert pending[0].id in text_of(first) and "console:gateway-1" in text_of(first)
    assert text_of(result) == "deployed web 1.5"
    assert [q.id for q in questions] == [pending[0].id]
    assert deploys(tmp_path) == ["deploy web 1.5"]
    assert later.is_error and len(after) == 2


async def test_a_cancelled_approval_says_no_one_answered_never_rejected(tmp_path: Path) -> None:
    """Cancelled through /v1 while the call waits: a tool error saying no one answered."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        call = r.call("ops__deploy", DEPLOY)
        await r.console.outstanding("gateway-1", "approval")
        question = (await r.bridge.list()).data[0]
        await r.bridge.cancel(question.id, "shift ended")
        result = await call
    assert result.is_error and "No one answered" in text_of(result)
    assert "reject" not in text_of(result).lower().replace("not a rejection", "")
    assert deploys(tmp_path) == []


async def test_an_upstream_elicitation_is_a_form_answered_on_the_console(tmp_path: Path) -> None:
    """The upstream elicits during a call: a form question; the answer returns as accept."""
    async with rig(tmp_path) as r:
        call = r.call("ops__purge_cache", {"service": "web"})
        await r.answer({"reason": "stale assets"}, kind="form")
        result = await call
    assert text_of(result) == "purged web: stale assets"


async def test_a_2025_era_upstreams_elicitation_create_is_answered_on_the_console(
    tmp_path: Path,
) -> None:
    """An upstream of the 2025 era only (ctx.elicit: an elicitation/create request mid-call):
    the same form question, the answer returned as accept."""
    async with rig(tmp_path, legacy=True) as r:
        call = r.call("ops__purge_queue", {"queue": "mail"})
        await r.answer({"reason": "poison message"}, kind="form")
        result = await call
    assert text_of(result) == "purged mail: poison message"


async def test_an_elicitation_cancelled_by_a_person_is_a_decline(tmp_path: Path) -> None:
    """The person cancels the form: the upstream hears decline."""
    async with rig(tmp_path) as r:
        call = r.call("ops__purge_cache", {"service": "web"})
        await r.console.outstanding("gateway-1", "form")
        question = (await r.bridge.list()).data[0]
        await r.bridge.cancel(question.id, "not now")
        result = await call
    assert text_of(result) == "not purged: decline"


@contextlib.asynccontextmanager
async def sign_in_page() -> AsyncIterator[tuple[str, list[str]]]:
    """A page on loopback for a URL-mode elicitation to point at: its URL, and every path
    requested of it (a person opens it; the bridge never does)."""
    opened: list[str] = []

    async def page(request: web.Request) -> web.Response:
        opened.append(request.path)
        return web.Response(text="signed in")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    async with serving(app, free_port(), access_log=None) as url:
        yield f"{url}/sign-in?session=b1", opened


@pytest.mark.parametrize(("pressed", "action"), [("Done", "accept"), ("Decline", "decline")])
async def test_a_url_elicitation_is_a_link_the_person_opens_never_the_bridge(
    tmp_path: Path, pressed: str, action: str
) -> None:
    """The upstream elicits in URL mode: the person is shown its message and the link, with
    Done and Decline, which the upstream hears as accept and decline; nothing fetches the
    link but the person."""
    async with (
        sign_in_page() as (url, opened),
        rig(tmp_path, legacy=True, env={"SIGN_IN_URL": url}) as r,
    ):
        call = r.call("ops__connect_billing", {})
        asked = await r.console.outstanding("gateway-1", "ask_user")
        (item,) = asked["payload"]["questions"]
        assert "Sign in to billing to connect it." in item["question"]
        assert url in item["question"]
        labels = {option["label"]: option["value"] for option in item["options"]}
        assert set(labels) == {"Done", "Decline"}
        await r.console.answer_ok(asked["token"], {"answers": {item["key"]: labels[pressed]}})
        result = await call
    assert text_of(result) == f"billing: {action}"
    assert opened == []


async def _overdue(r: Rig) -> None:
    """The open question's expiry brought forward (the shortest TTL /v1 takes is a minute),
    then the bridge's own sweep expires it as it would after the minute."""
    await r.console.outstanding("gateway-1", "approval")
    question = (await r.bridge.list()).data[0]
    with sqlite3.connect(r.door.db) as db:
        db.execute(
            "UPDATE pauses SET expires_at = ? WHERE interrupt_id = ?",
            (time.time() - 1, question.id),
        )
    assert await r.door.app[RUN_SERVICE].sweep() == 1


async def test_an_expired_approval_says_no_one_answered(tmp_path: Path) -> None:
    """Expiry: a tool error that says no one answered, never that someone rejected."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        call = r.call("ops__deploy", DEPLOY)
        await _overdue(r)
        result = await call
    assert result.is_error and "No one answered" in text_of(result) and "expired" in text_of(result)
    assert deploys(tmp_path) == []


async def test_a_fail_closed_expiry_still_says_no_one_answered(tmp_path: Path) -> None:
    """on_expire = "reject" stores a rejection, but the model is told it was a timeout."""
    rule = APPROVE_RULE + 'on_expire = "reject"\n'
    async with rig(tmp_path, rule) as r:
        call = r.call("ops__deploy", DEPLOY)
        await _overdue(r)
        result = await call
    assert result.is_error and "No one answered" in text_of(result)
    assert deploys(tmp_path) == []


async def test_a_quorum_of_two_runs_the_call_once_after_the_second_approval(
    tmp_path: Path,
) -> None:
    """quorum = 2: the first approval counts, the second decides; the call runs once."""
    rule = (
        '[[rules]]\ntools = "ops__deploy"\naction = "approve"\n'
        'answerers = ["console:bo", "console:cy"]\nquorum = 2\n'
    )
    async with rig(tmp_path, rule) as r:
        call = r.call("ops__deploy", DEPLOY)
        asked = await r.console.outstanding("gateway-1", "approval")
        service = r.door.app[RUN_SERVICE]
        question = (await r.bridge.list()).data[0]
        row = await service.stores.ledger.get(question.id)
        assert row is not None
        approve = {"decision": "approve", "comment": ""}
        bo, cy = Responder("console:bo", "bo"), Responder("console:cy", "cy")
        first = await service.redeem(asked["token"], approve, responder=bo, scope=row.scope)
        assert isinstance(first, Counted) and not call.done()
        second = await service.redeem(asked["token"], approve, responder=cy, scope=row.scope)
        assert isinstance(second, Redeemed)
        result = await call
    assert text_of(result) == "deployed web 1.5"
    assert deploys(tmp_path) == ["deploy web 1.5"]


async def test_an_upstream_that_crashes_is_one_sentence_and_the_next_call_restarts_it(
    tmp_path: Path,
) -> None:
    """The upstream's process dies mid-call: a tool error naming it, no traceback logged; the
    next call starts it again."""
    with Logs() as logs:
        async with rig(tmp_path) as r:
            crashed = await r.client.call_tool("ops__crash", {})
            after = await r.client.call_tool("ops__status", {"service": "web"})
    assert crashed.is_error and "The upstream MCP server 'ops' failed" in text_of(crashed)
    assert "\n" not in text_of(crashed)
    assert text_of(after) == "web is up"
    logs.assert_clean()


async def test_an_upstream_that_hangs_is_one_sentence(tmp_path: Path) -> None:
    """A call past the upstream's timeout_seconds: a tool error saying it did not answer."""
    async with rig(tmp_path, upstream="timeout_seconds = 1\n") as r:
        hung = await r.client.call_tool("ops__hang", {})
    assert hung.is_error and "did not answer in time" in text_of(hung), text_of(hung)


async def test_a_client_that_disconnects_and_repeats_its_call_waits_for_the_same_question(
    tmp_path: Path,
) -> None:
    """The client goes away while its call waits; a new connection making the same call
    attaches to the open question, and the approval runs the call once."""
    async with rig(tmp_path, APPROVE_RULE) as r:
        server = r.gateway.server(
            bridge_for=lambda _ctx: contextlib.nullcontext(r.bridge), caller_for=_test_caller
        )
        async with Client(server) as leaving:
            waiting = asyncio.create_task(leaving.call_tool("ops__deploy", DEPLOY))
            await r.console.outstanding("gateway-1", "approval")
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
        again = r.call("ops__deploy", DEPLOY)
        await r.answer({"decision": "approve"})
        result = await again
        questions = (await r.bridge.list()).data
    assert text_of(result) == "deployed web 1.5"
    assert len(questions) == 1
    assert deploys(tmp_path) == ["deploy web 1.5"]


async def _test_caller(_ctx: Any) -> Caller:
    # The rig's own caller: the same key, so the same call is the same question.
    return Caller(client="test-agent", key="ci", scope="test")


async def test_a_rule_may_pass_an_elicitation_through_to_a_client_that_takes_them(
    tmp_path: Path,
) -> None:
    """elicit = "client": a 2025-era client with an elicitation callback answers the upstream's
    question itself; no question is asked of a person."""

    async def answers(_context: Any, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        assert params.message == "Why purge the cache of web?"
        return ElicitResult(action="accept", content={"reason": "the client says so"})

    rule = '[[rules]]\ntools = "ops__purge*"\naction = "allow"\nelicit = "client"\n'
    async with rig(tmp_path, rule) as r:
        server = r.gateway.server(
            bridge_for=lambda _ctx: contextlib.nullcontext(r.bridge), caller_for=_test_caller
        )
        async with Client(server, mode="legacy", elicitation_callback=answers) as client:
            result = await client.call_tool("ops__purge_cache", {"service": "web"})
        asked = (await r.bridge.list()).data
    assert text_of(result) == "purged web: the client says so"
    assert asked == []


async def test_a_rule_passes_an_input_required_round_through_to_a_2026_client(
    tmp_path: Path,
) -> None:
    """elicit = "client" at 2026-07-28: the upstream's InputRequiredResult reaches the client
    as it is, its callback answers, and its retry brings the answer and the upstream's request
    state back through the gateway; no question is asked of a person."""
    asked: list[str] = []

    async def answers(_context: Any, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        asked.append(params.message)
        return ElicitResult(action="accept", content={"reason": "the client says so"})

    rule = '[[rules]]\ntools = "ops__purge*"\naction = "allow"\nelicit = "client"\n'
    async with rig(tmp_path, rule) as r:
        server = r.gateway.server(
            bridge_for=lambda _ctx: contextlib.nullcontext(r.bridge), caller_for=_test_caller
        )
        async with Client(server, elicitation_callback=answers) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("ops__purge_cache", {"service": "web"})
        questions = (await r.bridge.list()).data
    assert text_of(result) == "purged web: the client says so"
    assert asked == ["Why purge the cache of web?"]
    assert questions == []


async def test_an_approved_call_outlives_its_client_and_its_repeat_gets_the_result(
    tmp_path: Path,
) -> None:
    """The client goes away while the approved call runs upstream: the call finishes, once,
    and the same call made again returns its result without asking or running again."""
    rule = '[[rules]]\ntools = "ops__slow*"\naction = "approve"\n'
    slow = {"service": "web"}
    async with rig(tmp_path, rule) as r:
        first = r.call("ops__slow_deploy", slow)
        await r.answer({"decision": "approve"})
        await waiting.eventually(
            lambda: "slow_deploy web started" in deploys(tmp_path), what="the upstream running"
        )
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
        (tmp_path / "release").touch()
        again = await r.client.call_tool("ops__slow_deploy", slow)
        questions = (await r.bridge.list()).data
    assert text_of(again) == "deployed web slowly"
    assert deploys(tmp_path) == ["slow_deploy web started", "slow_deploy web done"]
    assert len(questions) == 1
