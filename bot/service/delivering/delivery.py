"""Delivering the outbox: what surfaces owe people, with retries and a visible failure.

The rows are written by the stores in the same transaction as the state
change that owes them; this module only claims due rows and hands each to
its surface. Whichever process claims a row delivers it, so a message owed
by a process that died is delivered by the next one that looks.

Rows go out in order per run and surface, a lane (a claim returns a lane's
oldest pending row only; the hand-off vouches for the rest), and lanes owe
each other nothing. So a pass only takes rows and queues each on its lane's
worker task, which sends them one at a time; a receiver that never answers
holds up its own lane, and a pass woken at a retry's due time is never stuck
behind a send. What is sent at once is bounded per destination: each chat
workspace (a Slack team, a Teams tenant, the console) has
``CHAT_CONCURRENCY`` calls, and the webhook sender bounds its own attempts
per receiver and in all (``bot.webhooks``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, assert_never

from bot import tracing
from bot.logs import scrub
from bot.questions import posts
from bot.questions.lifecycle import Lifecycle
from bot.questions.quorum import MayAnswer
from bot.questions.records import (
    WEBHOOK_LANE,
    DeliveryKind,
    OutboxRow,
    Question,
    QuestionStatus,
    RunRecord,
)
from bot.service.answering.policy import RequesterOrApprovers, requester_of_run
from bot.service.delivering.owed import OwedRows
from bot.service.delivering.surfaces import (
    DeliveryError,
    NudgesQuestions,
    RedrawsQuestions,
    Surface,
)
from bot.service.running.known import KnownRuns
from bot.stores.ports import Delivered, Posting, Stores

log = logging.getLogger(__name__)

# Long enough for a slow platform call; a claim held by a dead process lapses after it.
CLAIM_SECONDS = 60.0
# 1, 2, 4 ... 256 s, then every 5 minutes: about an hour before giving up.
MAX_ATTEMPTS = 12
MAX_BACKOFF_SECONDS = 300.0
MAX_REASON_CHARS = 300
CLAIM_BATCH = 50
# Calls at once to one chat workspace: a stalled platform takes these and no more.
CHAT_CONCURRENCY = 4
# Rows of one surface taken and not yet settled, at most, before a claim leaves the
# surface out: a row queued longer than its claim (CLAIM_SECONDS) may be taken by
# another process meanwhile.
SURFACE_IN_FLIGHT = CLAIM_BATCH

# A run's rows on one surface, sent in order by one worker.
Lane = tuple[str, str]


def backoff(attempts: int) -> float:
    return min(2.0**attempts, MAX_BACKOFF_SECONDS)


class Webhooks(Protocol):
    """Sends a closed question's signed event; the deliverer relies on it for WEBHOOK rows."""

    async def deliver(self, delivery: OutboxRow) -> None:
        """Send it once, in its turn among the sends it bounds itself (the deliverer calls it
        for every due row at once); ``DeliveryError`` (``permanent`` if no retry can help)
        if not taken."""
        ...

    def retry_delay(self, attempt: int) -> float | None:
        """Seconds before the attempt after the ``attempt``-th failure; None: give up."""
        ...


class Timer(Protocol):
    """A scheduled wake-up the deliverer may cancel (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None: ...


class Timers(Protocol):
    """Calls back after a delay; the deliverer relies on it to pass again when a retry is due."""

    def call_later(self, delay: float, callback: Callable[[], None], /) -> Timer: ...


class LoopTimers:
    """``Timers`` on the running event loop."""

    def call_later(self, delay: float, callback: Callable[[], None], /) -> Timer:
        return asyncio.get_running_loop().call_later(delay, callback)


class Gates:
    """At most ``limit`` holders per key at once; a key's semaphore lives while it is used."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._gates: dict[str, tuple[asyncio.Semaphore, int]] = {}

    async def enter(self, key: str) -> None:
        """Wait for a place under ``key``; ``leave`` it after, whatever happens."""
        gate, users = self._gates.get(key) or (asyncio.Semaphore(self._limit), 0)
        self._gates[key] = (gate, users + 1)
        try:
            await gate.acquire()
        except BaseException:
            self._forget(key)
            raise

    def leave(self, key: str) -> None:
        self._gates[key][0].release()
        self._forget(key)

    def _forget(self, key: str) -> None:
        gate, users = self._gates[key]
        if users == 1:
            del self._gates[key]
        else:
            self._gates[key] = (gate, users - 1)


# A question whose post failed for good: its asker is told at once (the API cancels it).
Unpostable = Callable[[OutboxRow, str], Awaitable[None]]


class Deliverer:
    """Claims due outbox rows for the surfaces this process has, and delivers them."""

    def __init__(
        self,
        *,
        stores: Stores,
        questions: Lifecycle,
        surfaces: Mapping[str, Surface],
        token_for: Callable[[Question], str],
        policy: RequesterOrApprovers,
        clock: Callable[[], float],
        spawn: Callable[[Any, str], None],
        owner: str,
        known: KnownRuns | None = None,
        yield_to: Callable[[], Awaitable[None]] | None = None,
        timers: Timers | None = None,
    ) -> None:
        # Set by the agents API when it serves: webhooks, and what a failed post means.
        self.webhooks: Webhooks | None = None
        self.unpostable: Unpostable | None = None
        self._owner = owner
        self._stores = stores
        # Marks what it delivered through the lifecycle's ``delivered`` step.
        self._questions = questions
        self._surfaces = surfaces
        # How an open question is drawn: its token, and who may answer (decided once here).
        self._token_for = token_for
        self._policy = policy
        self._clock = clock
        self._spawn = spawn
        self._yield_to = yield_to
        self._known = known or KnownRuns(stores.runs)
        self._busy = False
        self._again = False
        self._sweep = False
        self._one_pass = asyncio.Lock()
        self._wakes = timers or LoopTimers()
        self._timers: set[Timer] = set()
        # Rows this process's steps owed, delivered with no claim.
        self.owed = OwedRows()
        # Lanes with a worker, and the rows queued on each (with whether it was handed over).
        self._queues: dict[Lane, deque[tuple[OutboxRow, bool]]] = {}
        self._gates = Gates(CHAT_CONCURRENCY)
        # Rows taken and not yet settled in the store (sent and unmarked, or queued), with
        # their surface: a claim may return such a row (it is ours) and must not send it again.
        self._taken: dict[int, str] = {}
        self._taken_of: Counter[str] = Counter()
        self._claiming = False
        self._settled_meanwhile: set[int] = set()
        # Set when a claim left a surface out for its rows in flight: a lane's end claims again.
        self._starved = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._error: Exception | None = None
        # Rows delivered and not yet marked done (with their runs), marked in one write.
        self._marks: dict[int, tuple[Delivered, str]] = {}
        self._marking = asyncio.Lock()
        # Delivered rows whose mark failed: still pending, so the next pass may claim them.
        self._unmarked: list[int] = []

    def kick(self, *, sweep: bool = False) -> None:
        """Deliver what is due now, in an owned task; a kick while busy runs one more pass.

        A kick after this process's own step finds the rows it owed handed
        over (the lifecycle's sink is ``owed.owe_all``), with no claim. ``sweep``
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
        """One pass, its lanes sent to their end: the rows handed over, then everything due
        we may claim; returns how many the pass took."""
        self._error = None
        handed, claimed, _ = await self._pass(claim=True)
        await self._idle.wait()
        error, self._error = self._error, None
        if error is not None:
            raise error
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
                handed, _, more = await self._pass(claim=sweep)
                if more:
                    self._sweep = True  # there may be more
                if handed >= CLAIM_BATCH:
                    self._again = True  # the next batch in hand, after the acks
                # Whatever a state change owed meanwhile came with a kick.
                if not (self._sweep or self._again):
                    return
        finally:
            self._busy = False

    async def _pass(self, *, claim: bool) -> tuple[int, int, bool]:
        """Queue the handed-over rows on their lanes, then claim if asked or if the hand-off
        could not vouch for everything owed; returns how many rows of each it queued, and
        whether a full claim may have left more."""
        if not self._surfaces and self.webhooks is None:
            return 0, 0, False
        # One pass at a time: a claim must never take a row another pass holds in hand.
        async with self._one_pass:
            return await self._pass_locked(claim=claim)

    async def _pass_locked(self, *, claim: bool) -> tuple[int, int, bool]:
        for delivery_id in self._unmarked:
            self._release(delivery_id)
        self._unmarked.clear()
        now = self._clock()
        owed = self.owed
        handed, unvouched = owed.take(self._owner, now, limit=CLAIM_BATCH)
        served = self._served()
        for delivery in handed:
            if delivery.surface in served:
                self._queue(delivery, handed=True)
            else:
                # Another process's surface: its to claim once our born claim lapses.
                owed.settle(delivery.delivery_id, pending=True)
                owed.hold_back(delivery.run_id)
        if not (claim or unvouched):
            return len(handed), 0, False
        await self._mark_delivered()  # a claim must not find them pending again
        open_ = [s for s in served if self._taken_of[s] < SURFACE_IN_FLIGHT]
        if len(open_) < len(served):
            self._starved = True
        if not open_:
            return len(handed), 0, False
        # Our rows in flight are pending, so the claim returns them first; room past them.
        limit = CLAIM_BATCH + sum(self._taken_of[s] for s in open_)
        self._claiming = True
        try:
            claimed = await self._stores.outbox.claim(
                now, until=now + CLAIM_SECONDS, owner=self._owner, surfaces=open_, limit=limit
            )
        finally:
            self._claiming = False
            # Settled while the claim read (marked done, or a retry written): what it read
            # of them may predate that, and sending them again would repeat them.
            settled, self._settled_meanwhile = self._settled_meanwhile, set()
        # Ours on a lane already (the claim sees our rows in flight as pending) is not news.
        fresh = [
            delivery
            for delivery in claimed
            if delivery.delivery_id not in self._taken and delivery.delivery_id not in settled
        ]
        for delivery in fresh:
            # Handed over while we awaited: the hand-off delivers it, in its order.
            if not owed.holds(delivery.delivery_id):
                self._queue(delivery, handed=False)
        return len(handed), len(fresh), len(claimed) >= limit

    def _queue(self, delivery: OutboxRow, *, handed: bool) -> None:
        """Send it after the rows queued on its lane, starting the lane's worker if none."""
        self._taken[delivery.delivery_id] = delivery.surface
        self._taken_of[delivery.surface] += 1
        lane = (delivery.run_id, delivery.surface)
        queue = self._queues.get(lane)
        if queue is not None:
            queue.append((delivery, handed))
            return
        self._queues[lane] = deque([(delivery, handed)])
        self._idle.clear()
        self._spawn(self._drive(lane), f"deliver {delivery.surface} to run {delivery.run_id}")

    def _release(self, delivery_id: int) -> None:
        """The store says what became of the row (done, a retry, failed): a claim may see it."""
        surface = self._taken.pop(delivery_id, None)
        if surface is not None:
            self._taken_of[surface] -= 1
            if self._claiming:
                self._settled_meanwhile.add(delivery_id)

    async def _drive(self, lane: Lane) -> None:
        """The lane's worker: its rows sent, then their marks written."""
        again = True
        try:
            await self._send_lane(lane)
        except asyncio.CancelledError:
            again = False  # draining: the next process claims what is left
            raise
        except Exception as error:
            self._error = error  # for ``deliver_due``; the task's owner logs it
            raise
        finally:
            self._lane_ended(again=again)

    async def _send_lane(self, lane: Lane) -> None:
        """Send the lane's rows one at a time, until its queue is empty or one waits for a retry."""
        owed = self.owed
        queue = self._queues[lane]
        try:
            while queue:
                delivery, handed = queue[0]
                done = False
                try:
                    if delivery.kind is DeliveryKind.WEBHOOK:
                        done = await self._deliver(delivery)  # the sender bounds its own
                    else:
                        workspace = await self._workspace(delivery)
                        await self._gates.enter(workspace)
                        try:
                            done = await self._deliver(delivery)
                        finally:
                            self._gates.leave(workspace)
                finally:
                    queue.popleft()
                    # Delivered here: its hand-off (a write still awaiting its commit when
                    # we claimed) is dropped on arrival.
                    owed.settle(delivery.delivery_id, pending=not done)
                    if delivery.delivery_id not in self._marks:
                        self._release(delivery.delivery_id)
                    if handed and not done:
                        owed.hold_back(delivery.run_id)  # a run behind a retry keeps its order
                if not done:
                    break  # the rest waits behind the retry, for the claim
        finally:
            del self._queues[lane]
            # Left behind a retry or by an error (the store went away): the claim
            # delivers them, in order.
            for delivery, handed in queue:
                owed.settle(delivery.delivery_id, pending=True)
                if handed:
                    owed.hold_back(delivery.run_id)
                self._release(delivery.delivery_id)
            await self._mark_delivered()

    def _lane_ended(self, *, again: bool) -> None:
        if not self._queues:
            self._idle.set()
        # A delivered row had another behind it, or a claim left rows for want of room.
        if again and (self._sweep or self._starved):
            self._starved = False
            self.kick(sweep=True)

    async def _workspace(self, delivery: OutboxRow) -> str:
        """Whose calls its send shares ``CHAT_CONCURRENCY`` with: its chat workspace's."""
        run = await self._known.origin(delivery.run_id)
        # The run's own surface posts in its scope's workspace; a further post on another
        # surface shares that surface's bound with the other further posts there.
        workspace = _workspace(run.scope) if run and run.surface == delivery.surface else ""
        return f"{delivery.surface}:{workspace}"

    async def _mark_delivered(self) -> None:
        """Write the delivered marks so far, all in one write; a write already under way is
        waited for, so whatever reads the store next sees every row marked before it."""
        async with self._marking:
            marks, self._marks = self._marks, {}
            if not marks:
                return
            try:
                await self._questions.delivered([mark for mark, _ in marks.values()])
            except BaseException:
                # Still pending in the store: the next pass's claim delivers them (and what
                # follows) again; a claim under way now leaves them be.
                for mark, run_id in marks.values():
                    self.owed.unsettle(mark.delivery_id, run_id)
                self._unmarked.extend(marks)
                raise
            for delivery_id in marks:
                self._release(delivery_id)

    def _served(self) -> list[str]:
        """The outbox surfaces this process delivers: its surfaces, and webhooks if it sends."""
        return [*self._surfaces, *([WEBHOOK_LANE] if self.webhooks is not None else [])]

    async def _deliver(self, delivery: OutboxRow) -> bool:
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
        posting = None
        if delivery.kind is DeliveryKind.PUBLISH and ref is not None:
            # Put in front of people (a post with no reference was never made: closed first).
            repost = bool(delivery.body.get("repost"))
            posting = Posting(delivery.run_id, delivery.interrupt_id, delivery.surface, repost)
        self._marks[delivery.delivery_id] = (
            Delivered(delivery.delivery_id, self._clock(), ref, post, posting),
            delivery.run_id,
        )
        if delivery.followed:
            # The run's next row (the edit after an answer, a repost's edit of the old
            # message...) is due once this one is marked; a claim returns only the
            # oldest per lane, so the lane's end claims again.
            self._sweep = True
        return True

    async def _send(self, surface: Surface, delivery: OutboxRow) -> dict[str, Any] | None:
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
                # The first post's row carries the question as the pause wrote it, and the
                # token its pause signed is kept: that post reads and signs nothing.
                record = await self._question(delivery)
                if record is None or record.status is not QuestionStatus.OUTSTANDING:
                    return None  # closed before it could be posted; its close is owed next
                token, may = self._drawn(run, record)
                with self._posting(run, record):
                    return await surface.publish_question(run, record, token=token, may=may)
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

    def _posting(self, run: RunRecord, record: Question) -> AbstractContextManager[object]:
        """The ``question.posted`` span of one route's post."""
        attributes = tracing.ids(record, route=tracing.route_of(run.surface, run.conversation))
        return tracing.step("question.posted", record.trace_parent, attributes)

    def _drawn(self, run: RunRecord, record: Question) -> tuple[str, MayAnswer]:
        """What an open question is drawn with besides itself: its token, and who may answer."""
        return self._token_for(record), self._policy.who_may_answer(record, requester_of_run(run))

    async def _webhook(self, delivery: OutboxRow) -> dict[str, Any] | None:
        if self.webhooks is None:
            raise DeliveryError("webhooks are not served by this process")
        await self._mark_delivered()  # an edit delivered in this pass first: the object shows it
        await self.webhooks.deliver(delivery)
        return None

    async def _question(self, delivery: OutboxRow) -> Question | None:
        """The row's question: as the owing write left it if it was handed over, else read."""
        if delivery.pause is not None:
            return delivery.pause
        await self._mark_delivered()  # a post delivered in this pass has saved its reference
        return await self._stores.ledger.get(delivery.interrupt_id)

    async def _nudge(self, surface: Surface, run: RunRecord, delivery: OutboxRow) -> None:
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

    async def _redraw(self, surface: Surface, run: RunRecord, delivery: OutboxRow) -> None:
        record = await self._question(delivery)  # read now, unless a further post's
        # A closed question's own CLOSED edit shows its end; nothing to redraw.
        if record is None or record.status is not QuestionStatus.OUTSTANDING:
            return
        if not isinstance(surface, RedrawsQuestions):
            log.warning("%s cannot redraw a posted question; skipped", surface.name)
            return
        if delivery.kind is DeliveryKind.REFRESH:
            if record.message_ref is not None:
                token, may = self._drawn(run, record)
                await surface.refresh_question(
                    run, record, record.message_ref, token=token, may=may
                )
            return
        previous = delivery.body.get("previous_ref")
        # Unchanged if the second post failed: the old message is still the live one.
        if isinstance(previous, dict) and previous != record.message_ref:
            await surface.show_moved(run, record, previous)

    async def _failed(
        self, delivery: OutboxRow, reason: str, permanent: bool, retry_after: float | None
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
        """Pass again when the retry is due: its lane may be idle by then, and nothing else
        would look before the next sweep."""
        due = self._clock() + delay
        timer: Timer | None = None

        def wake() -> None:
            if timer is not None:
                self._timers.discard(timer)
            left = due - self._clock()
            if 0 < left < delay:
                self._wake_in(left)  # the timers' clock ran ahead of ours: not due yet
                return
            self.kick(sweep=True)

        timer = self._wakes.call_later(delay, wake)
        self._timers.add(timer)


def _workspace(scope: str) -> str:
    """The workspace part of a scope: Slack's team (``T1:C1``), Teams' tenant (``t1/19:...``)."""
    return scope.partition("/")[0].partition(":")[0]
