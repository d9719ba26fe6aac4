"""Delivering the outbox: what surfaces owe people, with retries and a visible failure.

The rows are written by the stores in the same transaction as the state
change that owes them; this module only claims due rows and hands each to
its surface. Whichever process claims a row delivers it, so a message owed
by a process that died is delivered by the next one that looks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, assert_never

from bot.kernel.interrupts import PendingInterrupt
from bot.logs import scrub
from bot.questions import posts
from bot.questions.lifecycle import Lifecycle
from bot.questions.records import WEBHOOK_LANE
from bot.questions.write import Owed
from bot.service.known_runs import KnownRuns
from bot.service.owed import OwedRows
from bot.service.surfaces import DeliveryError, NudgesQuestions, RedrawsQuestions, Surface
from bot.stores.ports import Delivered, Stores
from bot.stores.records import Delivery, DeliveryKind, Question, QuestionStatus, RunRecord

log = logging.getLogger(__name__)

# Long enough for a slow platform call; a claim held by a dead process lapses after it.
CLAIM_SECONDS = 60.0
# 1, 2, 4 ... 256 s, then every 5 minutes: about an hour before giving up.
MAX_ATTEMPTS = 12
MAX_BACKOFF_SECONDS = 300.0
MAX_REASON_CHARS = 300
CLAIM_BATCH = 50


def backoff(attempts: int) -> float:
    return min(2.0**attempts, MAX_BACKOFF_SECONDS)


class Webhooks(Protocol):
    """Sends a closed question's signed event; the deliverer relies on it for WEBHOOK rows."""

    async def deliver(self, delivery: Delivery) -> None:
        """Send it once; ``DeliveryError`` (``permanent`` if no retry can help) if not taken."""
        ...

    def retry_delay(self, attempt: int) -> float | None:
        """Seconds before the attempt after the ``attempt``-th failure; None: give up."""
        ...


# A question whose post failed for good: its asker is told at once (the API cancels it).
Unpostable = Callable[[Delivery, str], Awaitable[None]]


class Deliverer:
    """Claims due outbox rows for the surfaces this process has, and delivers them."""

    def __init__(
        self,
        *,
        stores: Stores,
        questions: Lifecycle,
        surfaces: Mapping[str, Surface],
        interrupt_for: Callable[[Question], PendingInterrupt],
        just_asked: Callable[[str], PendingInterrupt | None] = lambda _: None,
        clock: Callable[[], float],
        spawn: Callable[[Any, str], None],
        owner: str,
        known: KnownRuns | None = None,
        yield_to: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        # Set by the agents API when it serves: webhooks, and what a failed post means.
        self.webhooks: Webhooks | None = None
        self.unpostable: Unpostable | None = None
        self._owner = owner
        self._stores = stores
        # Marks what it delivered through the lifecycle's ``delivered`` step.
        self._questions = questions
        self._surfaces = surfaces
        self._interrupt_for = interrupt_for
        self._just_asked = just_asked
        self._clock = clock
        self._spawn = spawn
        self._yield_to = yield_to
        self._known = known or KnownRuns(stores.runs)
        self._busy = False
        self._again = False
        self._sweep = False
        self._one_pass = asyncio.Lock()
        self._timers: set[asyncio.TimerHandle] = set()
        # Rows this process's steps owed, delivered with no claim.
        self.owed = OwedRows()
        # Rows delivered in this pass (with their runs), marked done in one write.
        self._marks: list[tuple[Delivered, str]] = []

    def take_owed(self, owed: Sequence[Owed]) -> None:
        """A step this process wrote owed these rows: deliver them on the next kick."""
        self.owed.owe_all(owed)

    def kick(self, *, sweep: bool = False) -> None:
        """Deliver what is due now, in an owned task; a kick while busy runs one more pass.

        A kick after this process's own step finds the rows it owed handed
        over (``take_owed``), with no claim. ``sweep``
        claims whatever else is due too: rows another process owed, retries
        whose time has come, what a recovery took over.
        """
        self._sweep = self._sweep or sweep
        if self._busy:
            self._again = True
            return
        self._busy = True
        self._spawn(self._passes(), "deliver outbox")

    async def deliver_due(self) -> int:
        """One pass: the rows handed over, then everything due we may claim; returns how many."""
        handed, claimed = await self._pass(claim=True)
        return handed + claimed

    def cancel_timers(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    async def _passes(self) -> None:
        try:
            while True:
                if self._yield_to is not None:
                    await self._yield_to()  # acks in progress go first
                self._again = False
                sweep, self._sweep = self._sweep, False
                handed, claimed = await self._pass(claim=sweep)
                if claimed >= CLAIM_BATCH:
                    self._sweep = True  # there may be more
                if handed >= CLAIM_BATCH:
                    self._again = True  # the next batch in hand, after the acks
                # Whatever a state change owed meanwhile came with a kick.
                if not (self._sweep or self._again):
                    return
        finally:
            self._busy = False

    async def _pass(self, *, claim: bool) -> tuple[int, int]:
        """Deliver the handed-over rows, then claim if asked or if the hand-off could not
        vouch for everything owed; returns how many of each."""
        if not self._surfaces and self.webhooks is None:
            return 0, 0
        # One pass at a time: a claim must never take a row another pass holds in hand.
        async with self._one_pass:
            try:
                return await self._pass_locked(claim=claim)
            finally:
                await self._mark_delivered()

    async def _pass_locked(self, *, claim: bool) -> tuple[int, int]:
        now = self._clock()
        handed, unvouched = self.owed.take(self._owner, now, limit=CLAIM_BATCH)
        await self._deliver_handed(handed)
        if not (claim or unvouched):
            return len(handed), 0
        await self._mark_delivered()  # a claim must not find them pending again
        claimed = await self._stores.outbox.claim(
            now,
            until=now + CLAIM_SECONDS,
            owner=self._owner,
            surfaces=self._lanes(),
            limit=CLAIM_BATCH,
        )
        owed = self.owed
        for delivery in claimed:
            # Handed over while we awaited: the hand-off delivers it, in its order.
            if owed.holds(delivery.delivery_id):
                continue
            done = False
            try:
                done = await self._deliver(delivery)
            finally:
                # Delivered here: its hand-off (a write still awaiting its commit
                # when we claimed) is dropped on arrival.
                owed.settle(delivery.delivery_id, pending=not done)
        return len(handed), len(claimed)

    async def _mark_delivered(self) -> None:
        """Write this pass's delivered marks, all in one write."""
        marks, self._marks = self._marks, []
        if not marks:
            return
        try:
            await self._questions.delivered([mark for mark, _ in marks])
        except BaseException:
            # Still pending in the store: the claim delivers them (and what follows) again.
            for mark, run_id in marks:
                self.owed.unsettle(mark.delivery_id, run_id)
            raise

    async def _deliver_handed(self, handed: list[Delivery]) -> None:
        owed = self.owed
        # Lanes (run, surface) whose next row must wait for the claim: the claim
        # keeps order per lane, so another lane of the run goes on.
        waiting: set[tuple[str, str]] = set()
        lanes = self._lanes()
        remaining = deque(handed)
        try:
            while remaining:
                delivery = remaining.popleft()
                done = False
                try:
                    # A row of another process's surface is its to claim once our born
                    # claim lapses; a run behind a retry keeps its order.
                    lane = (delivery.run_id, delivery.surface)
                    if lane not in waiting and delivery.surface in lanes:
                        done = await self._deliver(delivery)
                finally:
                    owed.settle(delivery.delivery_id, pending=not done)
                    if not done:
                        waiting.add(lane)
                        owed.hold_back(delivery.run_id)
        finally:
            # Left by an error (the store went away): the claim delivers them, in order.
            for delivery in remaining:
                owed.settle(delivery.delivery_id, pending=True)
                owed.hold_back(delivery.run_id)

    def _lanes(self) -> list[str]:
        """The outbox surfaces this process delivers: its surfaces, and webhooks if it sends."""
        return [*self._surfaces, *([WEBHOOK_LANE] if self.webhooks is not None else [])]

    async def _deliver(self, delivery: Delivery) -> bool:
        """Deliver one row; False if it waits for a retry (which holds back its lane)."""
        try:
            if delivery.kind is DeliveryKind.WEBHOOK:
                ref = await self._webhook(delivery)  # no surface sends it, whichever lane it is in
            else:
                ref = await self._send(self._surfaces[delivery.surface], delivery)
        except DeliveryError as error:
            return await self._failed(delivery, error.reason, error.permanent, error.retry_after)
        except Exception as error:  # noqa: BLE001 - any other failure is worth a retry
            reason = f"{type(error).__name__}: {error}"
            return await self._failed(delivery, reason, permanent=False, retry_after=None)
        post = posts.post_index(delivery.body)
        done = Delivered(delivery.delivery_id, self._clock(), ref, post)
        self._marks.append((done, delivery.run_id))
        if delivery.followed:
            # The run's next row (the edit after an answer, a repost's edit of the
            # old message...) is due now; a claim returns only the oldest per run.
            self._again = self._sweep = True
        return True

    async def _send(self, surface: Surface, delivery: Delivery) -> dict[str, Any] | None:
        # Surfaces read only the run's origin, which never changes.
        run = await self._known.origin(delivery.run_id)
        if run is None:
            return None
        post = posts.post_index(delivery.body)
        if post is not None:
            # A further post: the question as that post's surface sees it, read now.
            await self._mark_delivered()
            record = await self._stores.ledger.get(delivery.interrupt_id)
            placed = posts.on_post(run, record, post) if record is not None else None
            if placed is None:
                return None
            run, record = placed
            delivery = dataclasses.replace(delivery, pause=record)
        match delivery.kind:
            case DeliveryKind.PUBLISH:
                # Nothing owed behind the post means nothing happened to the question
                # since it was asked (a close, an extension and a repost each owe a
                # message in the same write), so the question as asked is current.
                fresh = delivery.followed or post is not None
                asked = None if fresh else self._just_asked(delivery.interrupt_id)
                if asked is not None:
                    return await surface.publish_question(run, asked)
                record = await self._question(delivery)
                if record is None or record.status is not QuestionStatus.OUTSTANDING:
                    return None  # closed before it could be posted; its close is owed next
                return await surface.publish_question(run, self._interrupt_for(record))
            case DeliveryKind.CLOSED:
                record = await self._question(delivery)
                if record is not None:
                    await surface.show_closed(run, record)
                return None
            case DeliveryKind.MOVED | DeliveryKind.REFRESH:
                await self._redraw(surface, run, delivery)
                return None
            case DeliveryKind.OUTCOME:
                text = str(delivery.body.get("text", ""))
                await surface.post_outcome(run, text, failed=bool(delivery.body.get("failed")))
                return None
            case DeliveryKind.NUDGE:
                await self._nudge(surface, run, delivery)
                return None
            case DeliveryKind.WEBHOOK:
                return await self._webhook(delivery)  # never reached: _deliver sends it
            case _:
                assert_never(delivery.kind)

    async def _webhook(self, delivery: Delivery) -> dict[str, Any] | None:
        if self.webhooks is None:
            raise DeliveryError("webhooks are not served by this process")
        await self._mark_delivered()  # an edit delivered in this pass first: the object shows it
        await self.webhooks.deliver(delivery)
        return None

    async def _question(self, delivery: Delivery) -> Question | None:
        """The row's question: as the owing write left it if it was handed over, else read."""
        if delivery.pause is not None:
            return delivery.pause
        await self._mark_delivered()  # a post delivered in this pass has saved its reference
        return await self._stores.ledger.get(delivery.interrupt_id)

    async def _nudge(self, surface: Surface, run: RunRecord, delivery: Delivery) -> None:
        record = await self._question(delivery)
        # Closed since: the reminder is moot (its close's edit says how it ended).
        if record is None or record.status is not QuestionStatus.OUTSTANDING:
            return
        if not isinstance(surface, NudgesQuestions):
            log.warning("%s cannot post reminders; skipped", surface.name)
            return
        if record.message_ref is None and posts.post_index(delivery.body) is None:
            await self._mark_delivered()  # a post in this pass has saved its reference
            record = await self._stores.ledger.get(delivery.interrupt_id) or record
        await surface.post_nudge(run, record, dict(delivery.body))

    async def _redraw(self, surface: Surface, run: RunRecord, delivery: Delivery) -> None:
        record = await self._question(delivery)  # read now, unless a further post's
        # A closed question's own CLOSED edit shows its end; nothing to redraw.
        if record is None or record.status is not QuestionStatus.OUTSTANDING:
            return
        if not isinstance(surface, RedrawsQuestions):
            log.warning("%s cannot redraw a posted question; skipped", surface.name)
            return
        if delivery.kind is DeliveryKind.REFRESH:
            if record.message_ref is not None:
                await surface.refresh_question(run, self._interrupt_for(record), record.message_ref)
            return
        previous = delivery.body.get("previous_ref")
        # Unchanged if the second post failed: the old message is still the live one.
        if isinstance(previous, dict) and previous != record.message_ref:
            await surface.show_moved(run, record, previous)

    async def _failed(
        self, delivery: Delivery, reason: str, permanent: bool, retry_after: float | None
    ) -> bool:
        """Give up on the row, or schedule its retry (then False: its run waits)."""
        reason = scrub(reason)[:MAX_REASON_CHARS]
        now = self._clock()
        where = {"run_id": delivery.run_id, "interrupt_id": delivery.interrupt_id}
        if delivery.kind is DeliveryKind.WEBHOOK and self.webhooks is not None:
            # A webhook keeps trying for a day, on its own schedule.
            delay = None if permanent else self.webhooks.retry_delay(delivery.attempts + 1)
        elif permanent or delivery.attempts + 1 >= MAX_ATTEMPTS:
            delay = None
        else:
            delay = max(backoff(delivery.attempts), retry_after or 0.0)
        if delay is None:
            # Logged once, here; the reason stays on the run for an admin to read.
            log.error(
                "could not deliver %s to %s: %s",
                delivery.kind,
                delivery.surface,
                reason,
                extra=where,
            )
            await self._stores.outbox.failed(delivery.delivery_id, at=now, error=reason)
            if delivery.kind is DeliveryKind.PUBLISH and self.unpostable is not None:
                await self.unpostable(delivery, reason)
            return True
        log.warning(
            "delivery of %s to %s failed (%s); retrying in %.0f s",
            delivery.kind,
            delivery.surface,
            reason,
            delay,
            extra=where,
        )
        await self._stores.outbox.retry(delivery.delivery_id, next_at=now + delay, error=reason)
        self._wake_in(delay)
        return False

    def _wake_in(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        timer: asyncio.TimerHandle | None = None

        def wake() -> None:
            if timer is not None:
                self._timers.discard(timer)
            self.kick(sweep=True)

        timer = loop.call_later(delay, wake)
        self._timers.add(timer)
