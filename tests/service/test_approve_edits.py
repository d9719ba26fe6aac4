"""Approve with changes on the kernel: edit runs the edited call, respond answers instead,
and what a question does not allow, or an edit that does not fit, is refused."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.contract.answers import answer_json
from bot.contract.models import Policy
from bot.contract.payloads import payload_json, payload_of
from bot.interactions.approval import APPROVAL, approval_registration, approval_tool
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.kernel.tools import Tool, function_tool
from bot.service.answering.outcomes import (
    AlreadyVoted,
    AnswerInvalid,
    Counted,
    Redeemed,
    Responder,
    TokenInvalid,
)
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.answering.redeem import Redeemer
from bot.service.delivering.messages import approval_line, refusal_text
from bot.stores import QuestionStatus, open_stores
from bot.stores.ports import Stores
from bot.testing import FixedClock, call
from tests.support import WHERE, Harness, HarnessFactory

ALL = ("approve", "reject", "edit", "respond")
ASKED = {"service": "web", "environment": "production", "replicas": 2}
BOB = Responder("test:bob", "Bob")
CAROL = Responder("test:carol", "Carol")
DAN = Responder("test:dan", "Dan")


def _observation(messages: Sequence[Message]) -> dict[str, Any] | None:
    names = {c.call_id: c.name for m in messages for c in m.tool_calls}
    for message in reversed(messages):
        if message.role == "tool" and names.get(message.tool_call_id) == APPROVAL:
            data: dict[str, Any] = json.loads(message.content)
            return data
    return None


def agent_script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    """A model that asks, then deploys with the arguments the approval says to run."""
    del tools
    if any(m.role == "tool" and "deployed" in m.content for m in messages):
        return ModelReply(text="done")
    seen = _observation(messages)
    if seen is None:
        return ModelReply(
            calls=(call(APPROVAL, action="deploy", summary="Deploy web", arguments=ASKED),)
        )
    answer = seen.get("answer") or {}
    match answer.get("decision"):
        case "approve":
            return ModelReply(calls=(call("deploy", **ASKED),))
        case "edit":
            return ModelReply(calls=(call("deploy", **answer["arguments"]),))
        case "respond":
            return ModelReply(text=f"The approver said: {answer['message']}")
        case _:
            return ModelReply(text="not deployed")


def deploy_tool(ran: list[dict[str, Any]]) -> Tool:
    async def deploy(service: str, environment: str, replicas: int) -> str:
        ran.append({"service": service, "environment": environment, "replicas": replicas})
        return f"deployed {service} to {environment} x{replicas}"

    schema = {
        "type": "object",
        "properties": {
            "service": {"type": "string"},
            "environment": {"type": "string"},
            "replicas": {"type": "integer"},
        },
    }
    return function_tool(deploy, name="deploy", description="Deploy.", parameters=schema)


async def paused(
    harness: HarnessFactory, stores: Stores, ran: list[dict[str, Any]], **options: Any
) -> Harness:
    """``deployer``'s agent (``options`` its own), started and paused on its approval."""
    h = deployer(harness, stores, ran, **options)
    await h.start()
    assert h.surface.questions, "the run paused on its approval"
    return h


def deployer(
    harness: HarnessFactory,
    stores: Stores,
    ran: list[dict[str, Any]],
    *,
    allow: Sequence[str] = ALL,
    quorum: int = 1,
) -> Harness:
    """The agent that asks before it deploys, on ``stores`` (a fresh process, when they are
    reopened), its deploys kept in ``ran``."""
    policies = {APPROVAL: Policy(quorum=quorum)} if quorum > 1 else None
    return harness(
        stores,
        agent_script,
        tools=[approval_tool(), deploy_tool(ran)],
        registrations=[approval_registration(allow=allow)],
        policy=RequesterOrApprovers(anyone=True),
        policies=policies,
    )


async def test_an_edit_runs_the_edited_call_once_and_keeps_both_arguments(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The tool runs with the approver's arguments; the row, the audit and the model's
    transcript keep the original beside the edited ones."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    edited = {**ASKED, "environment": "staging"}
    outcome = await h.answer({"decision": "edit", "arguments": edited}, who=BOB)
    assert isinstance(outcome, Redeemed)
    await h.service.wait_idle()
    assert ran == [edited]
    row = await h.last_row()
    assert answer_json(row.answer)["decision"] == "edit"
    assert (
        answer_json(row.answer)["arguments"] == edited
        and answer_json(row.answer)["original_arguments"] == ASKED
    )
    line = approval_line(row.answer, "Bob", "noon", str)
    assert line == "Approved by Bob with changes at noon: environment production → staging"
    events = await h.stores.audit.recent(run_id=row.run_id)
    answered = next(e for e in events if e.kind == "answered")
    assert answered.detail["original_arguments"] == ASKED
    assert answered.detail["arguments"] == edited
    seen = _observation(h.provider.calls[-1])
    assert seen is not None and "answer.arguments" in seen["note"]
    assert h.surface.outcomes[-1][1] == "done"


def _after_the_edit(h: Harness, edited: dict[str, Any]) -> None:
    """What the model received once the edit resumed it, and on its next call: its approval
    call as it made it (the asked arguments), the edit told as data with each change, then
    its deploy call with the edited arguments and what that call returned."""
    resumed = next(c for c in h.provider.calls if _observation(c) is not None)
    asked = [c for m in resumed if m.role == "assistant" for c in m.tool_calls]
    assert [(c.name, c.arguments["arguments"]) for c in asked] == [(APPROVAL, ASKED)]
    seen = _observation(resumed)
    assert seen is not None
    assert seen["answer"]["arguments"] == edited and seen["answer"]["original_arguments"] == ASKED
    assert seen["changes"] == [
        {"argument": "environment", "asked": "production", "approved": "staging"}
    ]
    assert seen["note"].startswith("Approved with changes: the person changed the arguments")
    last = h.provider.calls[-1]
    ran = [c for m in last if m.role == "assistant" for c in m.tool_calls if c.name == "deploy"]
    assert [c.arguments for c in ran] == [edited]
    assert last[-1].role == "tool" and last[-1].content == "deployed web to staging x2"


async def _journaled_deploys(stores: Stores, run_id: str) -> list[tuple[dict[str, Any], Any]]:
    """The deploy calls the run's journal recorded, each with the result it recorded."""
    steps = await stores.journal.steps(run_id)
    return [
        (made["arguments"], steps.get(f"tool:{made['call_id']}"))
        for name, step in steps.items()
        if name.startswith("model:")
        for made in step["calls"]
        if made["name"] == "deploy"
    ]


async def test_the_transcript_and_the_journal_show_the_call_as_edited(
    harness: HarnessFactory, stores: Stores
) -> None:
    """After an edit the model reads what changed, its next call runs the edited arguments,
    and the journal records that call and its result."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    edited = {**ASKED, "environment": "staging"}
    assert isinstance(await h.answer({"decision": "edit", "arguments": edited}), Redeemed)
    await h.service.wait_idle()
    assert ran == [edited]
    _after_the_edit(h, edited)
    run_id = (await h.last_row()).run_id
    assert await _journaled_deploys(stores, run_id) == [(edited, "deployed web to staging x2")]


async def test_after_a_restart_the_resumed_transcript_still_shows_the_edit(
    harness: HarnessFactory, db_path: Path, clock: FixedClock
) -> None:
    """The process dies between the edit's spend and the resume: a fresh process resumes
    from the checkpoint, and its model reads the edit as the first process's would have."""
    ran: list[dict[str, Any]] = []
    before = await open_stores(f"sqlite:///{db_path}")
    h = await paused(harness, before, ran)
    edited = {**ASKED, "environment": "staging"}
    redeemer = Redeemer(
        capability=h.capability,
        stores=before,
        policy=RequesterOrApprovers(anyone=True),
        clock=clock,
    )
    outcome = await redeemer.redeem(
        h.surface.last_token,
        {"decision": "edit", "arguments": edited},
        responder=BOB,
        scope=WHERE.scope,
    )
    assert isinstance(outcome, Redeemed)
    run_id = (await h.last_row()).run_id
    await before.close()
    after = await open_stores(f"sqlite:///{db_path}")
    try:
        restarted = deployer(harness, after, ran)
        assert await restarted.service.recover() == 1
        await restarted.service.wait_idle()
        assert ran == [edited]
        _after_the_edit(restarted, edited)
        assert await _journaled_deploys(after, run_id) == [(edited, "deployed web to staging x2")]
    finally:
        await after.close()


async def test_text_from_a_surface_becomes_the_original_json_types(
    harness: HarnessFactory, stores: Stores
) -> None:
    """A modal hands back text: numeric text for an integer argument becomes the integer."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    edited = {"service": "web", "environment": "production", "replicas": "3"}
    assert isinstance(await h.answer({"decision": "edit", "arguments": edited}), Redeemed)
    await h.service.wait_idle()
    assert ran == [{**ASKED, "replicas": 3}]


async def test_respond_gives_the_model_the_message_and_runs_nothing(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The model reads the approver's message in the tool's place; the tool never runs."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    outcome = await h.answer({"decision": "respond", "message": "wait for the freeze to end"})
    assert isinstance(outcome, Redeemed)
    await h.service.wait_idle()
    assert ran == []
    assert h.surface.outcomes[-1][1] == "The approver said: wait for the freeze to end"


async def test_an_edit_that_does_not_fit_names_the_field_and_leaves_it_open(
    harness: HarnessFactory, stores: Stores
) -> None:
    """A wrong type or an unknown key is refused with the field named; the token stays good."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    bad = {"service": "web", "environment": "staging", "replicas": "many", "force": True}
    outcome = await h.answer({"decision": "edit", "arguments": bad})
    assert isinstance(outcome, AnswerInvalid)
    assert set(outcome.fields) == {"arguments.replicas", "arguments.force"}
    assert "arguments.replicas: must be a number" in refusal_text(outcome)
    assert (await h.last_row()).status is QuestionStatus.OUTSTANDING
    assert isinstance(await h.answer({"decision": "approve"}), Redeemed)
    await h.service.wait_idle()
    assert ran == [ASKED]


async def test_a_decision_the_question_does_not_allow_is_refused(
    harness: HarnessFactory, stores: Stores
) -> None:
    """By default only approve and reject: an edit is refused, naming the decision."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran, allow=("approve", "reject"))
    outcome = await h.answer({"decision": "edit", "arguments": {**ASKED, "replicas": 9}})
    assert isinstance(outcome, AnswerInvalid) and "decision" in outcome.fields
    respond = await h.answer({"decision": "respond", "message": "no"})
    assert isinstance(respond, AnswerInvalid)
    assert (await h.last_row()).status is QuestionStatus.OUTSTANDING
    assert ran == []


async def test_an_edit_past_the_size_limit_is_refused(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Edited arguments pass the question's own size limit."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    huge = {**ASKED, "service": "w" * 300_000}
    outcome = await h.answer({"decision": "edit", "arguments": huge})
    assert isinstance(outcome, AnswerInvalid)
    assert (await h.last_row()).status is QuestionStatus.OUTSTANDING


async def test_a_token_for_other_arguments_is_refused(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The token binds the asked arguments' digest: a row whose arguments changed under it
    refuses every answer."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    claims = h.capability.decode_token(h.surface.last_token)  # type: ignore[misc]
    assert claims.args, "an approval's token carries its arguments' digest"
    row = await h.last_row()
    swapped = payload_of(
        "approval",
        {**payload_json(row.payload), "arguments": {**ASKED, "environment": "staging"}},
    )
    from dataclasses import replace

    from bot.human.pause_event import claims_for

    assert claims_for(replace(row, payload=swapped)).args != claims.args


async def test_a_quorum_counts_an_edit_only_with_the_same_arguments(
    harness: HarnessFactory, stores: Stores
) -> None:
    """A differing edit restarts the count and says so; matching edits then decide."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran, quorum=2)
    first = await h.answer({"decision": "approve"}, who=BOB)
    assert isinstance(first, Counted) and first.approvals == 1
    staging = {**ASKED, "environment": "staging"}
    second = await h.answer({"decision": "edit", "arguments": staging}, who=CAROL)
    assert isinstance(second, Counted) and second.restarted and second.approvals == 1
    assert "new proposal" in refusal_text(second)
    assert "environment production → staging" in refusal_text(second)
    row = await h.last_row()
    assert row.status is QuestionStatus.OUTSTANDING
    assert row.tally.approve == ["test:carol"] and row.tally.superseded == ["test:bob"]
    third = await h.answer({"decision": "edit", "arguments": staging}, who=DAN)
    assert isinstance(third, Redeemed)
    await h.service.wait_idle()
    row = await h.last_row()
    assert answer_json(row.answer)["decision"] == "edit" and answer_json(row.answer)[
        "approved_by"
    ] == [
        "test:carol",
        "test:dan",
    ]
    assert ran == [staging]


async def test_an_approval_an_edit_set_aside_may_be_cast_again_for_the_edit(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Bob's approval of the arguments as asked no longer counts once Carol edits; Bob may
    vote again, his new ballot replacing the old, and the two close it with Carol's edit."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran, quorum=2)
    assert isinstance(await h.answer({"decision": "approve"}, who=BOB), Counted)
    staging = {**ASKED, "environment": "staging"}
    carol = await h.answer({"decision": "edit", "arguments": staging}, who=CAROL)
    assert isinstance(carol, Counted) and "may answer again" in refusal_text(carol)
    closed = await h.answer({"decision": "edit", "arguments": staging}, who=BOB)
    assert isinstance(closed, Redeemed)
    await h.service.wait_idle()
    row = await h.last_row()
    assert (
        answer_json(row.answer)["decision"] == "edit"
        and answer_json(row.answer)["arguments"] == staging
    )
    assert answer_json(row.answer)["approved_by"] == ["test:carol", "test:bob"]
    assert row.tally.approve == ["test:carol", "test:bob"] and not row.tally.superseded
    assert ran == [staging]


async def test_a_ballot_that_counts_is_cast_once(harness: HarnessFactory, stores: Stores) -> None:
    """An approval of the proposal, or a rejection, stays: a second ballot is refused."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran, quorum=2)
    assert isinstance(await h.answer({"decision": "approve"}, who=BOB), Counted)
    assert isinstance(await h.answer({"decision": "reject"}, who=BOB), AlreadyVoted)
    staging = {**ASKED, "environment": "staging"}
    edit = {"decision": "edit", "arguments": staging}
    assert isinstance(await h.answer(edit, who=BOB), AlreadyVoted)
    row = await h.last_row()
    assert row.status is QuestionStatus.OUTSTANDING and row.tally.approve == ["test:bob"]


async def test_approvals_count_for_the_arguments_they_approved(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Bob approves as asked, Carol edits, Dan approves as asked: two people approved the
    arguments as asked, which run; Carol's edit did not."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran, quorum=2)
    await h.answer({"decision": "approve"}, who=BOB)
    await h.answer({"decision": "edit", "arguments": {**ASKED, "replicas": 3}}, who=CAROL)
    assert isinstance(await h.answer({"decision": "approve"}, who=DAN), Redeemed)
    await h.service.wait_idle()
    row = await h.last_row()
    assert answer_json(row.answer)["decision"] == "approve"
    assert answer_json(row.answer)["approved_by"] == ["test:bob", "test:dan"]
    assert ran == [ASKED]


async def test_an_unchanged_edit_is_an_approval(harness: HarnessFactory, stores: Stores) -> None:
    """Edited arguments equal to the asked ones are recorded as a plain approval."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    assert isinstance(await h.answer({"decision": "edit", "arguments": dict(ASKED)}), Redeemed)
    await h.service.wait_idle()
    assert answer_json((await h.last_row()).answer) == {"decision": "approve", "comment": ""}
    assert ran == [ASKED]


async def test_a_forged_digest_is_refused(harness: HarnessFactory, stores: Stores) -> None:
    """A token whose arguments digest is not the row's is not a token for this question."""
    ran: list[dict[str, Any]] = []
    h = await paused(harness, stores, ran)
    claims = h.capability.decode_token(h.surface.last_token)  # type: ignore[misc]
    from dataclasses import replace

    from bot.human.tokens import MintedToken

    other = h.capability.signer.encode(MintedToken(replace(claims, args="x" * 22)))
    outcome = await h.answer({"decision": "approve"}, token=other)
    assert isinstance(outcome, TokenInvalid)
    assert (await h.last_row()).status is QuestionStatus.OUTSTANDING
