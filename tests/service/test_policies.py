"""Approval policies on kernel questions: no self-approval, fail-closed expiry, quorum."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.contract.answers import answer_json
from bot.questions.quorum import EXPIRED_REJECTION, people_text, tally_line
from bot.service.answering import outcomes
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import parse_policies
from bot.service.delivering.messages import refusal_text
from bot.stores import QuestionStatus, RunStatus
from bot.stores.ports import Stores
from bot.testing import FixedClock
from tests.support import REQUESTER, Harness, HarnessFactory, paused_on_approval

APPROVE = {"decision": "approve", "comment": "ok"}
REJECT = {"decision": "reject", "comment": "no"}
BOB = Responder("test:bob", "bo")
CAROL = Responder("test:carol", "ana")
DAN = Responder("test:dan", "dan")


async def paused(harness: HarnessFactory, stores: Stores, **policy: Any) -> Harness:
    return await paused_on_approval(harness, stores, policy)


def _resumes(h: Harness) -> int:
    # The model is called once to ask, then once per resume.
    return len(h.provider.calls) - 1


async def test_the_requester_is_refused_either_way_and_nothing_changes(
    harness: HarnessFactory, stores: Stores
) -> None:
    h = await paused(harness, stores, requester_may_answer=False)
    for answer in (APPROVE, REJECT):
        outcome = await h.answer(answer, who=REQUESTER)
        assert isinstance(outcome, outcomes.SelfApproval)
    assert "only someone else" in refusal_text(outcomes.SelfApproval())
    row = await h.last_row()
    assert row.status is QuestionStatus.OUTSTANDING and row.tally is None
    # An admin who started the run is still the requester.
    admin = Responder(REQUESTER.id, REQUESTER.name, is_admin=True)
    assert isinstance(await h.answer(APPROVE, who=admin), outcomes.SelfApproval)
    assert isinstance(await h.answer(APPROVE, who=BOB), outcomes.Redeemed)
    assert _resumes(h) == 1


async def test_by_default_the_requester_may_answer(harness: HarnessFactory, stores: Stores) -> None:
    h = await paused(harness, stores)
    assert isinstance(await h.answer(APPROVE, who=REQUESTER), outcomes.Redeemed)


async def test_a_fail_closed_expiry_is_expired_with_a_rejection(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    h = await paused(harness, stores, on_expire="reject")
    clock.advance(24 * 3600 + 1)
    assert await h.service.sweep() == 1
    await h.service.wait_idle()
    row = await h.last_row()
    assert row.status is QuestionStatus.EXPIRED and answer_json(row.answer) == EXPIRED_REJECTION
    observation = json.loads(next(m for m in h.provider.calls[-1] if m.role == "tool").content)
    assert observation["status"] == "expired"
    assert observation["answer"]["decision"] == "reject"
    assert "do not perform the action" in observation["note"]


async def test_a_plain_expiry_stores_no_answer(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    h = await paused(harness, stores)
    clock.advance(24 * 3600 + 1)
    assert await h.service.sweep() == 1
    row = await h.last_row()
    assert row.status is QuestionStatus.EXPIRED and row.answer is None


async def test_a_quorum_of_two_needs_two_people(harness: HarnessFactory, stores: Stores) -> None:
    h = await paused(harness, stores, quorum=2)
    first = await h.answer(APPROVE, who=BOB)
    assert first == outcomes.Counted("approve", 1, 0, 2)
    assert "1 of 2 approved" in refusal_text(first)
    row = await h.last_row()
    assert row.status is QuestionStatus.OUTSTANDING
    assert row.tally.approve == ["test:bob"] and row.tally.reject == []
    # The message is redrawn with the tally.
    redrawn = h.surface.refreshed[-1][0]
    assert tally_line(redrawn) == "1 of 2 approved: @bo"
    # The same person again: refused, nothing changes, for either decision.
    assert isinstance(await h.answer(APPROVE, who=BOB), outcomes.AlreadyVoted)
    assert isinstance(await h.answer(REJECT, who=BOB), outcomes.AlreadyVoted)
    assert (await h.last_row()).tally == row.tally
    assert _resumes(h) == 0
    run = await h.stores.runs.get(row.run_id)
    assert run is not None and run.status is RunStatus.PAUSED
    done = await h.answer(APPROVE, who=CAROL)
    assert isinstance(done, outcomes.Redeemed)
    closed = await h.last_row()
    assert closed.status is QuestionStatus.ANSWERED
    assert answer_json(closed.answer)["decision"] == "approve"
    assert answer_json(closed.answer)["approved_by"] == ["test:bob", "test:carol"]
    assert closed.closed_by_id == "test:carol"
    # Closed by both, so every surface's "Approved by ..." names both, in voting order.
    assert closed.closed_by == "bo and ana"
    assert _resumes(h) == 1
    late = await h.answer(APPROVE, who=DAN)
    assert isinstance(late, outcomes.AlreadyAnswered) and late.by == "bo and ana"
    assert _resumes(h) == 1


async def test_a_slack_user_votes_once_in_every_workspace(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The same Slack user id clicking in another workspace is the same voter: refused."""
    h = await paused(harness, stores, quorum=2)
    bo_here, bo_there = Responder("slack:T0TEST:U0BO", "bo"), Responder("slack:T0OTHER:U0BO", "bo")
    assert isinstance(await h.answer(APPROVE, who=bo_here), outcomes.Counted)
    tallied = await h.last_row()
    assert isinstance(await h.answer(APPROVE, who=bo_there), outcomes.AlreadyVoted)
    row = await h.last_row()
    assert row.status is QuestionStatus.OUTSTANDING and row.tally == tallied.tally
    assert row.tally.approve == ["slack:T0TEST:U0BO"] and _resumes(h) == 0
    assert isinstance(await h.answer(APPROVE, who=CAROL), outcomes.Redeemed)
    assert answer_json((await h.last_row()).answer)["approved_by"] == [
        "slack:T0TEST:U0BO",
        "test:carol",
    ]


async def test_the_requester_is_the_requester_in_every_workspace(
    harness: HarnessFactory, stores: Stores
) -> None:
    """A requester named in one workspace clicking in another is refused as the requester."""
    h = await paused(harness, stores, requester="slack:T0TEST:U0ALICE", requester_may_answer=False)
    there = Responder("slack:T0OTHER:U0ALICE", "alice")
    assert isinstance(await h.answer(APPROVE, who=there), outcomes.SelfApproval)
    row = await h.last_row()
    assert row.status is QuestionStatus.OUTSTANDING and row.answer is None


def test_several_deciders_are_named_together() -> None:
    """One name as it is, two joined by "and", three or more listed with a final "and"."""
    assert people_text([]) == "" and people_text(["@ana"]) == "@ana"
    assert people_text(["@ana", "@bo"]) == "@ana and @bo"
    assert people_text(["@a", "@b", "@c"]) == "@a, @b and @c"


async def test_one_reject_rejects_by_default(harness: HarnessFactory, stores: Stores) -> None:
    h = await paused(harness, stores, quorum=2)
    assert isinstance(await h.answer(APPROVE, who=BOB), outcomes.Counted)
    assert isinstance(await h.answer(REJECT, who=CAROL), outcomes.Redeemed)
    closed = await h.last_row()
    assert answer_json(closed.answer)["decision"] == "reject" and answer_json(closed.answer)[
        "rejected_by"
    ] == ["test:carol"]
    assert _resumes(h) == 1


async def test_reject_quorum_needs_as_many_rejects(harness: HarnessFactory, stores: Stores) -> None:
    h = await paused(harness, stores, quorum=2, reject="quorum")
    assert await h.answer(REJECT, who=BOB) == outcomes.Counted("reject", 0, 1, 2)
    assert (await h.last_row()).status is QuestionStatus.OUTSTANDING
    assert isinstance(await h.answer(REJECT, who=CAROL), outcomes.Redeemed)
    assert answer_json((await h.last_row()).answer)["rejected_by"] == ["test:bob", "test:carol"]


async def test_votes_are_audited(harness: HarnessFactory, stores: Stores) -> None:
    h = await paused(harness, stores, quorum=2)
    await h.answer(APPROVE, who=BOB)
    await h.answer(APPROVE, who=CAROL)
    row = await h.last_row()
    kinds = [e.kind for e in await h.stores.audit.recent(run_id=row.run_id)]
    assert kinds.count("voted") == 2 and kinds.count("answered") == 1


def test_bot_policies_are_validated_with_the_api_model() -> None:
    parsed = parse_policies('{"approval": {"quorum": 2}}')
    assert parsed["approval"].quorum == 2 and parsed["approval"].on_expire == "expire"
    for bad, words in (
        ('{"approval": {"on_expire": "approve"}}', "on_expire"),
        ('{"approval": {"remind_after_seconds": 0}}', "remind_after_seconds"),
        ('{"approval": {"nope": 1}}', "nope"),
        ("[1]", "JSON object"),
        ("{", "not JSON"),
    ):
        with pytest.raises(ValueError, match=words):
            parse_policies(bad)
