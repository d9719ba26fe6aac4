"""The outbox: what a surface owes is delivered once it can be, and a lasting failure is visible."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.human import ASK_USER
from bot.questions.quorum import MayAnswer
from bot.questions.records import (
    Closing,
    DeliveryKind,
    DeliveryState,
    OutboxRow,
    Question,
    QuestionStatus,
    RunRecord,
)
from bot.service.delivering.delivery import MAX_ATTEMPTS
from bot.service.delivering.surfaces import DeliveryError
from bot.stores import RunStatus
from bot.stores.ports import Stores
from bot.testing import FixedClock, RecordingSurface, call, calls, question, say
from tests.support import HarnessFactory, steps

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])


@dataclass
class DownSurface(RecordingSurface):
    """Fails every call while ``down``; records what got through."""

    down: bool = True
    error: Exception = field(default_factory=lambda: DeliveryError("503 from the platform"))
    attempts: int = 0

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        self.attempts += 1
        if self.down:
            raise self.error
        return await super().publish_question(run, question, token=token, may=may)

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        if self.down:
            raise self.error
        await super().show_closed(run, record)


def with_surface(h: Any, surface: RecordingSurface) -> None:
    h.service.add_surface(surface)
    h.surface = surface


async def test_a_question_published_while_the_surface_is_down_appears_when_it_is_back(
    stores: Stores, harness: HarnessFactory, clock: FixedClock
) -> None:
    """The question stays owed (visibly), then is posted once the surface answers again."""
    h = harness(stores, [calls(ASK), say("done")])
    surface = DownSurface(error=DeliveryError("ratelimited", retry_after=30.0))
    with_surface(h, surface)
    run_id = await h.start()
    assert surface.questions == []
    (owed,) = await stores.outbox.of_run(run_id)
    assert (owed.kind, owed.state, owed.last_error) == (
        DeliveryKind.PUBLISH,
        DeliveryState.PENDING,
        "ratelimited",
    )
    (outstanding,) = await stores.ledger.outstanding()  # owed, so never outstanding unseen
    clock.advance(10)
    assert await h.service.deliverer.deliver_due() == 0  # Retry-After honoured
    surface.down = False
    clock.advance(25)
    assert await h.service.deliverer.deliver_due() == 1
    assert [i.interrupt_id for _, i in surface.questions] == [outstanding.interrupt_id]
    posted = await stores.ledger.get(outstanding.interrupt_id)
    assert posted is not None
    assert posted.message_ref == {"surface": "test", "message": "m1"}
    assert await h.answer({"answers": {"Which environment?": "staging"}})
    assert [text for _, text, _ in surface.outcomes] == ["done"]


async def test_a_surface_that_always_fails_leaves_its_reason_on_the_run(
    stores: Stores, harness: HarnessFactory, clock: FixedClock
) -> None:
    """Transient failures are retried with backoff until the last attempt, then marked."""
    h = harness(stores, [calls(ASK)])
    surface = DownSurface(error=ConnectionResetError("connection reset by peer"))
    with_surface(h, surface)
    run_id = await h.start()
    for _ in range(MAX_ATTEMPTS):
        clock.advance(400)
        await h.service.deliverer.deliver_due()
    assert surface.attempts == MAX_ATTEMPTS
    run = await stores.runs.get(run_id)
    assert run is not None
    assert run.status is RunStatus.PAUSED
    assert run.delivery_error == "ConnectionResetError: connection reset by peer"
    (owed,) = await stores.outbox.of_run(run_id)
    assert owed.state is DeliveryState.FAILED
    clock.advance(400)
    assert await h.service.deliverer.deliver_due() == 0
    assert surface.attempts == MAX_ATTEMPTS


async def test_a_permanent_failure_is_marked_at_once_with_the_fix(
    stores: Stores, harness: HarnessFactory
) -> None:
    """invalid_auth is not retried: the run says why nothing was posted."""
    h = harness(stores, [calls(ASK)])
    reason = "invalid_auth: the bot token was revoked; reinstall the app"
    surface = DownSurface(error=DeliveryError(reason, permanent=True))
    with_surface(h, surface)
    run_id = await h.start()
    assert surface.attempts == 1
    run = await stores.runs.get(run_id)
    assert run is not None
    assert run.delivery_error == reason


async def test_a_token_in_a_failure_reason_is_not_kept(
    stores: Stores, harness: HarnessFactory
) -> None:
    """Whatever a surface's error says, nothing token-shaped lands on the run."""
    h = harness(stores, [calls(ASK)])
    surface = DownSurface(
        error=DeliveryError("rejected eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", permanent=True)
    )
    with_surface(h, surface)
    run_id = await h.start()
    run = await stores.runs.get(run_id)
    assert run is not None
    assert "eyJ" not in run.delivery_error
    assert "[token]" in run.delivery_error


async def test_messages_of_a_run_wait_for_the_one_owed_before_them(
    stores: Stores, harness: HarnessFactory, clock: FixedClock
) -> None:
    """Nothing overtakes the owed post; once due, a question already closed is not posted
    (it would invite an answer that can only be refused), its close and outcome are."""
    h = harness(stores, [calls(ASK), say("done")])
    surface = DownSurface(error=DeliveryError("503"))
    with_surface(h, surface)
    await h.start()
    token = h.service.views.token_for((await stores.ledger.outstanding())[0])
    assert await h.answer({"answers": {"Which environment?": "staging"}}, token=token)
    assert surface.questions == [] and surface.closed == [] and surface.outcomes == []
    surface.down = False
    clock.advance(5)
    for _ in range(3):
        await h.service.deliverer.deliver_due()
    assert surface.questions == []
    assert len(surface.closed) == 1
    assert [text for _, text, _ in surface.outcomes] == ["done"]


async def test_one_kick_delivers_every_message_a_run_owes_in_order(
    stores: Stores, harness: HarnessFactory, clock: FixedClock
) -> None:
    """A close and an outcome owed together both go out: delivering one makes the next due."""
    h = harness(stores, [calls(ASK), say("done")])
    run_id = await h.start()
    record = (await stores.ledger.outstanding())[0]
    now = clock()
    closing = Closing(
        QuestionStatus.CANCELLED,
        by="ops",
        at=now,
        lease_owner=h.service.owner,
        lease_until=now + 30,
    )
    assert await steps(stores, lifecycle=h.service.questions).spend(record.interrupt_id, closing)
    # The run finishes before any delivery pass: two rows wait, one behind the other.
    assert await steps(stores, lifecycle=h.service.questions).finish(
        run_id, RunStatus.COMPLETED, at=now, text="done"
    )
    assert [d.state for d in await stores.outbox.of_run(run_id)][-2:] == [
        DeliveryState.PENDING,
        DeliveryState.PENDING,
    ]
    h.service.deliverer.kick()
    await h.service.wait_idle()
    assert len(h.surface.closed) == 1
    assert [text for _, text, _ in h.surface.outcomes] == ["done"]


async def test_a_question_extended_before_its_first_post_is_posted_as_extended(
    stores: Stores, harness: HarnessFactory, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question as asked is posted only if nothing happened to it since: after an
    extension the post carries the new expiry and a token signed for it."""
    h = harness(stores, [calls(ASK), say("done")])
    monkeypatch.setattr(h.service.deliverer, "kick", lambda **_: None)  # no pass until we say
    await h.start()
    assert h.surface.questions == []
    (record,) = await stores.ledger.outstanding()
    later = record.expires_at + 3600
    assert await steps(stores, lifecycle=h.service.questions).extend(
        record.interrupt_id, expires_at=later, at=clock(), actor="ops"
    )
    # The post (its question read again, since a row was owed behind it), then
    # the redraw the extension owed.
    assert await h.service.deliverer.deliver_due() == 2
    ((_, posted),) = h.surface.questions
    assert posted.expires_at == later
    claims = h.capability.signer.decode(h.surface.tokens[posted.interrupt_id], now=clock())
    assert claims.exp == int(later)


async def test_a_runs_own_messages_go_out_with_no_claim(
    stores: Stores, harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post, the edit and the outcome are handed over by the writes that owed them,
    so the process driving the run delivers them without reading the outbox."""
    h = harness(stores, [calls(ASK), say("done")])
    claims: list[float] = []
    real_claim = stores.outbox.claim

    async def counted_claim(now: float, **kwargs: Any) -> list[OutboxRow]:
        claims.append(now)
        return await real_claim(now, **kwargs)

    monkeypatch.setattr(stores.outbox, "claim", counted_claim)
    await h.start()
    assert await h.answer({"answers": {"Which environment?": "staging"}})
    assert len(h.surface.questions) == 1
    assert [r.status for r in h.surface.closed] == [QuestionStatus.ANSWERED]
    assert [text for _, text, _ in h.surface.outcomes] == ["done"]
    assert claims == []
    assert {d.state for d in await stores.outbox.of_run(h.surface.closed[0].run_id)} == {
        DeliveryState.DONE
    }


@dataclass
class OrderedSurface(DownSurface):
    """Records every delivery in one list, to check the order across kinds."""

    down: bool = False
    order: list[str] = field(default_factory=list)

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        await super().show_closed(run, record)
        self.order.append("closed")

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        await super().post_outcome(run, text, failed=failed)
        self.order.append("outcome")


async def test_a_handed_row_that_waits_for_a_retry_holds_back_the_ones_after_it(
    stores: Stores, harness: HarnessFactory, clock: FixedClock
) -> None:
    """The edit fails and is retried; the outcome owed behind it waits, then both go out
    in the order they were owed."""
    h = harness(stores, [calls(ASK), say("done")])
    surface = OrderedSurface(error=DeliveryError("ratelimited", retry_after=5.0))
    with_surface(h, surface)
    await h.start()
    surface.down = True
    assert await h.answer({"answers": {"Which environment?": "staging"}})
    assert surface.order == []
    surface.down = False
    assert await h.service.deliverer.deliver_due() == 0  # the retry is not due yet
    clock.advance(5)
    await h.service.deliverer.deliver_due()
    await h.service.deliverer.deliver_due()
    assert surface.order == ["closed", "outcome"]


async def test_rows_held_when_the_store_fails_mid_pass_go_back_to_the_claim(
    stores: Stores, harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post went out but its mark failed: the row is still pending, so nothing owed
    after it may be handed over ahead of it; the claim delivers them in order."""
    h = harness(stores, [calls(ASK), say("done")])
    monkeypatch.setattr(h.service.deliverer, "kick", lambda **_: None)  # no pass until we say
    await h.start()
    marked = h.service.questions.delivered

    async def store_down(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("the database went away")

    monkeypatch.setattr(h.service.questions, "delivered", store_down)
    with pytest.raises(ConnectionError):
        await h.service.deliverer.deliver_due()
    assert len(h.surface.questions) == 1
    monkeypatch.setattr(h.service.questions, "delivered", marked)
    assert await h.answer({"answers": {"Which environment?": "staging"}})
    await h.service.deliverer.deliver_due()
    # The claim's oldest row first: the unmarked post (now closed, so not posted again).
    assert (len(h.surface.questions), h.surface.closed) == (1, [])
    await h.service.deliverer.deliver_due()
    await h.service.deliverer.deliver_due()
    assert [r.status for r in h.surface.closed] == [QuestionStatus.ANSWERED]
    assert [text for _, text, _ in h.surface.outcomes] == ["done"]


async def test_a_row_handed_over_meanwhile_is_delivered_once(
    stores: Stores, harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claim can see a row the hand-off holds (written while a pass awaited a surface);
    it leaves it to the hand-off, and the question is posted once."""
    h = harness(stores, [calls(ASK), say("done")])
    monkeypatch.setattr(h.service.deliverer, "kick", lambda **_: None)  # no pass until we say
    await h.start()
    handoff = h.service.deliverer.owed
    real_take = handoff.take
    # The first pass took its rows before this one was handed over.
    monkeypatch.setattr(handoff, "take", lambda owner, now, **_: ([], True))
    assert await h.service.deliverer.deliver_due() == 1  # claimed, and left in hand
    assert h.surface.questions == []
    monkeypatch.setattr(handoff, "take", real_take)
    assert await h.service.deliverer.deliver_due() == 1
    assert await h.service.deliverer.deliver_due() == 0
    assert len(h.surface.questions) == 1
