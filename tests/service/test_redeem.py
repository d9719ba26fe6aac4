"""Redeeming answers: each refusal is typed, spends nothing, and the right answer still works."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from bot.human import ASK_USER, AskUserPayload, AskUserResponse, InteractionRegistration
from bot.service.answering import outcomes
from bot.service.answering.outcomes import Responder
from bot.service.delivering.messages import refusal_text
from bot.stores import QuestionStatus, RunStatus
from bot.stores.ports import Stores
from bot.testing import FixedClock, call, calls, question, say
from tests.support import Harness, HarnessFactory, forgeries

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
GOOD = {"answers": {"Which environment?": "staging"}}


async def paused(harness: HarnessFactory, stores: Stores, **options: Any) -> Harness:
    h = harness(stores, [calls(ASK), say("deployed")], **options)
    await h.start()
    return h


async def assert_untouched(h: Harness) -> None:
    interrupt = h.surface.questions[-1][1]
    row = await h.stores.ledger.get(interrupt.interrupt_id)
    assert row is not None and row.status is QuestionStatus.OUTSTANDING and row.answer is None
    run = await h.stores.runs.get(interrupt.run_id)
    assert run is not None and run.status is RunStatus.PAUSED


async def test_refusals_spend_nothing_and_the_right_answer_still_redeems(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Garbage, wrong scope, wrong person, invalid answer: refused; then the real answer wins."""
    h = await paused(harness, stores)
    refusals = [
        await h.answer(GOOD, token="not-a-token"),
        await h.service.redeem(
            h.surface.last_token, GOOD, responder=Responder("test:alice"), scope="T-other"
        ),
        await h.answer(GOOD, who=Responder("test:mallory", "Mallory")),
        await h.answer({"answers": {"Which environment?": "prod"}}),
        await h.answer({"answers": {}}),
        await h.answer({"wrong": "shape"}),
    ]
    assert [type(r) for r in refusals] == [
        outcomes.TokenInvalid,
        outcomes.ScopeMismatch,
        outcomes.NotAllowedToAnswer,
        outcomes.AnswerInvalid,
        outcomes.AnswerInvalid,
        outcomes.AnswerInvalid,
    ]
    await assert_untouched(h)
    won = await h.answer(GOOD)
    assert isinstance(won, outcomes.Redeemed) and won.responder == "Alice"
    again = await h.answer(GOOD)
    assert isinstance(again, outcomes.AlreadyAnswered) and again.by == "Alice"
    assert "already answered by Alice" in refusal_text(again)
    assert h.surface.outcomes[-1][1] == "deployed"


async def test_every_kind_of_bad_token_is_refused_and_spends_nothing(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Forged, tampered, alg:none, unknown kid, truncated, garbage: TokenInvalid, row untouched."""
    h = await paused(harness, stores)
    for kind, token in forgeries(h.surface.last_token).items():
        refused = await h.answer(GOOD, token=token)
        assert isinstance(refused, outcomes.TokenInvalid), kind
        await assert_untouched(h)
    assert isinstance(await h.answer(GOOD), outcomes.Redeemed)


async def test_a_cross_scope_attempt_is_recorded_on_the_ledger(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The refused cross-scope answer leaves a record an admin can see."""
    h = await paused(harness, stores)
    token = h.surface.last_token
    await h.service.redeem(token, GOOD, responder=Responder("test:eve"), scope="T-evil")
    row = await stores.ledger.get(h.surface.questions[-1][1].interrupt_id)
    assert row is not None
    assert [a.scope for a in row.cross_scope_attempts] == ["T-evil"]


async def test_cross_scope_is_allowed_when_the_registration_says_so(
    harness: HarnessFactory, stores: Stores
) -> None:
    """cross_scope_allowed=True redeems from another scope, still recorded."""
    open_registration = InteractionRegistration.ask_user(
        payload_schema=AskUserPayload, response_schema=AskUserResponse, cross_scope_allowed=True
    )
    h = await paused(harness, stores, registrations=[open_registration])
    outcome = await h.service.redeem(
        h.surface.last_token, GOOD, responder=Responder("test:alice", "Alice"), scope="T2"
    )
    assert isinstance(outcome, outcomes.Redeemed)


async def test_an_answer_invalid_refusal_names_the_field(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The refusal says which answer was wrong, in one sentence."""
    h = await paused(harness, stores)
    refused = await h.answer({"answers": {"Which environment?": "prod"}})
    assert isinstance(refused, outcomes.AnswerInvalid)
    assert "'prod' is not one of ['staging', 'production']" in refusal_text(refused)


async def test_an_admin_may_answer_someone_elses_question(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Admins pass the answer policy even when they did not start the run."""
    h = await paused(harness, stores)
    outcome = await h.answer(GOOD, who=Responder("test:root", "Root", is_admin=True))
    assert isinstance(outcome, outcomes.Redeemed)


async def test_an_expired_token_is_refused_and_the_sweep_resumes_without_an_answer(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    """Past expiry: TokenExpired; the sweeper closes it and the model is told 'no answer'."""
    h = await paused(harness, stores)
    clock.advance(24 * 3600 + 1)
    assert isinstance(await h.answer(GOOD), outcomes.TokenExpired)
    await assert_untouched(h)
    assert await h.service.sweep() == 1
    await h.service.wait_idle()
    assert await h.service.sweep() == 0
    observation = next(m for m in h.provider.calls[-1] if m.role == "tool").content
    assert "expired" in observation and "not a refusal" in observation
    assert h.surface.closed[-1].status is QuestionStatus.EXPIRED
    assert isinstance(await h.answer(GOOD), outcomes.TokenExpired)


async def test_a_cancelled_question_refuses_later_answers_with_who_cancelled(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Cancel closes the pause; a later answer hears who cancelled it."""
    h = await paused(harness, stores)
    interrupt_id = h.surface.questions[-1][1].interrupt_id
    assert await h.service.cancel(interrupt_id, by=Responder("test:root", "Root"))
    await h.service.wait_idle()
    refused = await h.answer(GOOD)
    assert isinstance(refused, outcomes.AlreadyCancelled) and refused.by == "Root"
    seen = json.loads(next(m for m in h.provider.calls[-1] if m.role == "tool").content)
    assert (seen["status"], seen["cancelled_by"]["name"]) == ("cancelled", "Root")


async def test_a_store_failing_mid_spend_leaves_the_token_unspent(
    harness: HarnessFactory, sqlite_stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spend that raises is StoreUnavailable; the row stays open and a retry succeeds."""
    h = await paused(harness, sqlite_stores)

    async def broken(*_args: Any) -> bool:
        raise sqlite3.OperationalError("database is locked")

    unit = h.service.questions.unit
    real = unit.apply
    monkeypatch.setattr(unit, "apply", broken)
    refused = await h.answer(GOOD)
    assert isinstance(refused, outcomes.StoreUnavailable)
    assert "try again" in refusal_text(refused)
    await assert_untouched(h)
    monkeypatch.setattr(unit, "apply", real)
    assert isinstance(await h.answer(GOOD), outcomes.Redeemed)


async def test_an_answer_to_a_question_this_process_asked_reads_no_row(
    harness: HarnessFactory, stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The asker checks the answer against the question it kept; the close guards the rest."""
    h = await paused(harness, stores)
    read: list[str] = []
    real = stores.ledger.get

    async def counted(interrupt_id: str) -> Any:
        read.append(interrupt_id)
        return await real(interrupt_id)

    monkeypatch.setattr(stores.ledger, "get", counted)
    won = await h.answer(GOOD)
    assert isinstance(won, outcomes.Redeemed) and won.closed.status is QuestionStatus.ANSWERED
    assert read == []
    # Closed now, and forgotten: a second answer reads the row and hears who answered.
    again = await h.answer(GOOD)
    assert isinstance(again, outcomes.AlreadyAnswered) and again.by == "Alice"
    assert read == [won.interrupt_id]


async def test_a_question_closed_by_another_process_is_refused_as_the_row_says(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The kept copy still says outstanding; the close refuses, and the row decides."""
    h = await paused(harness, stores)
    interrupt_id = h.surface.questions[-1][1].interrupt_id
    elsewhere = harness(stores, [say("unused")])
    assert await elsewhere.service.cancel(interrupt_id, by=Responder("test:root", "Root"))
    await elsewhere.service.wait_idle()
    refused = await h.answer(GOOD)
    assert isinstance(refused, outcomes.AlreadyCancelled) and refused.by == "Root"
    row = await stores.ledger.get(interrupt_id)
    assert row is not None and row.status is QuestionStatus.CANCELLED
