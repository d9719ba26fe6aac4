"""RunService: runs from chat messages, pauses out, answers in, resumes in the background.

Adapters call ``start`` and ``redeem`` and nothing else decides anything:
the checks live in ``Redeemer``, the words in ``bot.service.delivering.messages``.

Durability. A RUNNING run is owed work (its first turn, or a resume). One
worker drives it, under a lease a heartbeat renews, released when the work
ends or a drain cuts it short; ``recover`` takes over runs whose lease is
free or lapsed. The journal makes a re-drive exactly-once for every step
that finished (``bot.kernel.journal``); the lifecycle's steps owe the
outbox rows that ``bot.service.delivering.delivery`` delivers.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any, assert_never

from aiohttp import web

from bot import tracing
from bot.contract.answers import CancelReason
from bot.human.capability import HumanInteractionCapability
from bot.kernel.turn import Agent, TurnCompleted, TurnSuspended
from bot.questions.quorum import expired_answer
from bot.questions.records import (
    Closing,
    ConversationSummary,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.questions.write import TurnToResume
from bot.service.answering.outcomes import (
    ChatsOff,
    Counted,
    NotStarted,
    Redeemed,
    RedeemOutcome,
    Responder,
)
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.answering.posted import PostedQuestion, PostedQuestions
from bot.service.answering.redeem import Redeemer
from bot.service.delivering.delivery import Deliverer, Timers
from bot.service.delivering.messages import RUN_FAILED
from bot.service.delivering.nudges import Nudges
from bot.service.delivering.surfaces import Conversation, Surface
from bot.service.delivering.views import Redraws, RunWithQuestions
from bot.service.running import run_events
from bot.service.running.capability_ports import lifecycle_of
from bot.service.running.foreground import Foreground
from bot.service.running.known import KnownRuns
from bot.service.running.lease_keeper import LeaseKeeper
from bot.service.running.metrics import Metrics
from bot.service.running.requests import HISTORY_RUNS, run_id_for, turn_request
from bot.service.running.resume import resume_turn
from bot.service.running.tasks import OwnedTasks
from bot.stores.errors import is_outage
from bot.stores.ports import Stores
from bot.stores.storable import storable_text

log = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 30.0
# What a worker is handed so it need not read it: the closed question and its paused
# turn; a new run's conversation as its start read it (``_work``).
_Resume = tuple[Question | None, TurnToResume | None]
_Earlier = tuple[RunRecord, ...] | None


class RunService:
    """The one place a run's life is driven, for every surface."""

    def __init__(
        self,
        *,
        agent: Agent,
        capability: HumanInteractionCapability,
        stores: Stores,
        surfaces: Mapping[str, Surface] | None = None,
        policy: RequesterOrApprovers | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        foreground: Foreground | None = None,
        timers: Timers | None = None,
        chats: bool = True,
    ) -> None:
        self.agent = agent
        # False (BOT_AGENT=none): the bridge serves agents' questions; a chat message starts
        # no run, and its surface tells the person so (``ChatsOff``).
        self.chats = chats
        self.capability = capability
        self.stores = stores
        self.surfaces: dict[str, Surface] = dict(surfaces or {})
        self.metrics = metrics or Metrics()
        # Who may answer each question: the redeem admits by it, every surface draws it.
        self.policy = policy or RequesterOrApprovers()
        self.clock = clock
        self.lease_seconds = lease_seconds
        # Platform adapters count the acks in progress here; our work yields to them.
        self.foreground = foreground or Foreground()
        # Unique per process life, so a restart never takes its predecessor's leases as its own.
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        # What surfaces and the answer policy read of a run never changes.
        self.known = KnownRuns(stores.runs)
        self._redeemer = Redeemer(
            capability=capability,
            stores=stores,
            policy=self.policy,
            clock=clock,
            lease_owner=self.owner,
            lease_seconds=lease_seconds,
            known=self.known,
        )
        self.keeps_request_keys = self._redeemer.keeps_request_keys  # ``redeem``'s once_key
        self._tasks = OwnedTasks()
        self._spawn = self._tasks.spawn
        self.views = Redraws(capability, stores)
        self._posted = PostedQuestions(capability, stores, self.known)
        # Runs this process is driving, and those asked for again meanwhile.
        self._driving: set[str] = set()
        self._again: set[str] = set()
        self._leases = LeaseKeeper(
            stores.leases,
            owner=self.owner,
            lease_seconds=lease_seconds,
            clock=clock,
            spawn=self._spawn,
        )
        # The capability's lifecycle, bound to us: what its steps owe, our deliverer delivers.
        self.questions = lifecycle_of(capability, stores)
        self.deliverer: Deliverer = Deliverer(
            stores=stores,
            questions=self.questions,
            surfaces=self.surfaces,
            token_for=self.views.drawn_token,
            policy=self.policy,
            clock=clock,
            spawn=self._spawn,
            owner=self.owner,
            known=self.known,
            yield_to=self.foreground.yield_to,
            timers=timers,
        )
        self.questions.bind(
            owner=self.owner, claim_seconds=lease_seconds, sink=self.deliverer.owed.owe_all
        )
        self.questions.observe(self._redeemer.asked.saw)
        # A policy's reminders and escalation steps, owed by the sweeper.
        self.nudges = Nudges(stores, self.questions, self.policy, self.known)

    def add_surface(self, surface: Surface) -> None:
        self.surfaces[surface.name] = surface

    # -- the path of one pause -------------------------------------------------

    async def start(
        self, where: Conversation, who: Responder, text: str, *, key: str | None = None
    ) -> RunRecord | None:
        """Store the run and drive its first turn in the background.

        ``key`` is the platform's id for the message (a Slack ``event_id``,
        a Teams activity id): the run id is derived from it, so a retried or
        duplicated delivery finds the run already there and starts nothing
        (None), in this process or any other sharing the store. ``ChatsOff``
        when this bridge runs no chat agent: nothing is stored.
        """
        if not self.chats:
            raise ChatsOff("BOT_AGENT=none")
        now = self.clock()
        run = RunRecord(
            run_id=run_id_for(where, key),
            scope=where.scope,
            surface=where.surface,
            requester=who.id,
            # A chat message is what a person typed: a character no store keeps (a NUL)
            # is one they never meant, so it reads as U+FFFD rather than losing the run.
            text=storable_text(text),
            created_at=now,
            updated_at=now,
            conversation=where.to_json(),
            # Created leased to us, so no other process's recovery takes it first.
            lease_owner=self.owner,
            lease_until=now + self.lease_seconds,
        )
        try:
            created = await self.questions.start(run, history=HISTORY_RUNS + 1)
        except Exception as error:  # noqa: BLE001  full disk, read-only file, store down
            log.warning("could not store a new run (%s); nothing started", type(error).__name__)
            raise NotStarted(type(error).__name__) from None
        if created is None:
            log.info("duplicate start ignored", extra={"run_id": run.run_id})
            return None
        run_events.started(run.run_id, by=who.id, surface=where.surface)
        work = self._work(run.run_id, run=run, leased=True, earlier=created.earlier)
        self._spawn(work, f"turn {run.run_id}")
        return run

    async def redeem(
        self,
        token: str,
        answer: Mapping[str, Any],
        *,
        responder: Responder,
        scope: str,
        once_key: str = "",
        retryable: bool = False,
    ) -> RedeemOutcome:
        """Check and spend; on success the resume is owed and scheduled. ``once_key``: the
        request's idempotency key; ``retryable``: a refusal leaves it unused, so the request
        sent again corrected is checked anew (``bot.service.answering.redeem``)."""
        outcome = await self._redeemer.redeem(
            token, answer, responder=responder, scope=scope, once_key=once_key, retryable=retryable
        )
        if isinstance(outcome, Counted):
            self.deliverer.kick()  # the tally's redraw
            return outcome
        if not isinstance(outcome, Redeemed):
            self.metrics.refusals.labels(reason=type(outcome).__name__).inc()
            return outcome
        if outcome.closed.resumes_a_turn:  # leased by the spend; an API agent resumes elsewhere
            work = self._work(
                outcome.run_id,
                run=outcome.run,
                resume_from=outcome.closed,
                turn=outcome.turn,
                leased=True,
            )
            self._spawn(work, f"resume {outcome.run_id}")
        self.deliverer.kick()
        return outcome

    async def cancel(
        self, interrupt_id: str, *, by: Responder, reason: str = "", once_key: str = ""
    ) -> bool:
        """Close an open question as cancelled and resume its run without an answer.

        ``reason`` is kept on the row (as its answer's ``reason``) and reaches
        the model as a JSON value, never as prose. ``once_key``: the command's
        idempotency key (``bot.questions.write.Write.once_key``).
        """
        closing = self._closing(QuestionStatus.CANCELLED, by=by.display, by_id=by.id)
        if reason:
            closing = dataclasses.replace(closing, answer=CancelReason(reason))
        return await self._close(interrupt_id, closing, once_key)

    async def sweep(self, *, limit: int = 100) -> int:
        """Expire overdue questions, resumed as "expired" (fail-closed: answered "reject")."""
        count = 0
        for record in await self.stores.ledger.overdue(self.clock(), limit=limit):
            closing = self._closing(QuestionStatus.EXPIRED, by="", by_id="", record=record)
            if await self._close(record.interrupt_id, closing, asked=record):
                count += 1
        await self.nudges.sweep(self.clock())
        return count

    async def recover(self) -> int:
        """Take over every RUNNING run whose lease is free or lapsed.

        Run at start and by the sweeper: a run whose worker died (its lease
        lapsed), was cut short by a drain (released), or never started its
        first turn is driven by whichever process sees it next.
        """
        count = 0
        now = self.clock()
        for run_id in await self.stores.leases.lapsed(now):
            # Leased here, so the count is what this process took over.
            if run_id not in self._driving and await self.stores.leases.acquire(
                run_id, self.owner, now=now, until=now + self.lease_seconds
            ):
                log.info("recovering run", extra={"run_id": run_id})
                self._spawn(self._work(run_id), f"recover {run_id}")
                count += 1
        self.deliverer.kick(sweep=True)
        return count

    # -- reading, for surfaces that redraw from the store (``bot.service.delivering.views``)
    async def history(self, surface: str, key: str, *, limit: int = 50) -> list[RunWithQuestions]:
        """A conversation's runs with their questions, oldest first."""
        return await self.views.history(surface, key, limit=limit)

    async def posted_question(
        self, token: str, *, surface: str, scope: str, interrupt_id: str = ""
    ) -> PostedQuestion | None:
        """The open question an action on a posted message is for, read by the id its token
        names and found on the post in ``scope`` (``bot.service.answering.posted``)."""
        return await self._posted.find(
            token, surface=surface, scope=scope, interrupt_id=interrupt_id
        )

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        return await self.stores.runs.conversations(surface, limit=limit)

    # -- background work -------------------------------------------------------

    async def wait_idle(self) -> None:
        """Wait until no owned task is left (tasks may start more tasks)."""
        await self._tasks.wait_idle()

    async def drain(self, grace_seconds: float) -> None:
        """Let owned tasks finish within the grace, then cancel the rest: a cancelled
        worker releases its lease, so the next start takes its run over at once."""
        self.deliverer.cancel_timers()
        await self._tasks.drain(grace_seconds)

    def _closing(
        self, status: QuestionStatus, *, by: str, by_id: str, record: Question | None = None
    ) -> Closing:
        now, answer = self.clock(), None if record is None else expired_answer(record)
        until = now + self.lease_seconds
        return Closing(status, by, now, answer, by_id, lease_owner=self.owner, lease_until=until)

    async def _close(
        self, interrupt_id: str, closing: Closing, once_key: str = "", asked: Question | None = None
    ) -> bool:
        # One write closes, audits, owes the edit and leases us the resume; ``asked``: a copy
        # of the question, for its posts (``Lifecycle.close``).
        written = await self.questions.close(interrupt_id, closing, once_key=once_key, asked=asked)
        if written is None:
            return False
        record = written.question
        if record is not None:
            run_events.closed(closing.status.value, record.run_id, interrupt_id, by=closing.by)
        if record is not None and record.resumes_a_turn:
            work = self._work(record.run_id, resume_from=record, turn=written.turn, leased=True)
            self._spawn(work, f"resume {record.run_id}")
        self.deliverer.kick()
        return True

    async def _work(
        self,
        run_id: str,
        *,
        run: RunRecord | None = None,
        resume_from: Question | None = None,
        turn: TurnToResume | None = None,
        leased: bool = False,
        earlier: tuple[RunRecord, ...] | None = None,
    ) -> None:
        """Drive the run while it is owed work; a second call meanwhile drives it once more.

        ``run``, ``resume_from`` and ``turn`` spare the reads, and ``leased`` the
        lease, when the caller just wrote (or, closing, read) them; ``earlier``: the
        run was created just now (so it has no questions and no journal yet), and
        these are its conversation's runs, as its start read them.
        """
        # Owed, and durably so: it may wait for the acks in progress.
        await self.foreground.yield_to()
        if run_id in self._driving:
            self._again.add(run_id)
            return
        self._driving.add(run_id)
        try:
            again = True
            while again:
                self._again.discard(run_id)
                await self._under_lease(run_id, run, (resume_from, turn), leased, earlier)
                run, resume_from, turn, leased, earlier = None, None, None, False, None
                again = run_id in self._again
        finally:
            self._driving.discard(run_id)

    async def _under_lease(
        self, run_id: str, run: RunRecord | None, resume: _Resume, leased: bool, earlier: _Earlier
    ) -> None:
        now = self.clock()
        if not leased and not await self.stores.leases.acquire(
            run_id, self.owner, now=now, until=now + self.lease_seconds
        ):
            return  # another worker holds it, or nothing is owed
        self._leases.keep(run_id)
        ended = False
        try:
            run = run or await self.stores.runs.get(run_id)
            if run is not None:
                self.known.remember(run)
                ended = await self._advance(run, resume, earlier)
        finally:
            self._leases.drop(run_id)
            if not ended:
                # Also on a drain's cancellation: the next start takes over at once.
                await self._leases.release(run_id)
            self.deliverer.kick()

    async def _advance(self, run: RunRecord, resume: _Resume, earlier: _Earlier) -> bool:
        """Resume from the latest closed pause, or (re)run the first turn.

        True when the outcome was recorded (paused or finished), which also
        released the lease in the same write.
        """
        (resume_from, turn), fresh = resume, earlier is not None
        if resume_from is None and not fresh:
            pauses = await self.stores.ledger.for_runs([run.run_id])
            if any(p.status is QuestionStatus.OUTSTANDING for p in pauses):
                log.error("a running run has an open question", extra={"run_id": run.run_id})
                return False
            closed = [p for p in pauses if p.resumed_at is None]
            resume_from = closed[-1] if closed else None
        started = time.perf_counter()
        if resume_from is not None:
            run_events.resumed(run.run_id, resume_from.interrupt_id)
        try:
            if resume_from is not None:
                attributes = tracing.ids(resume_from)
                with tracing.step("run.resumed", resume_from.trace_parent, attributes):
                    outcome = await resume_turn(
                        self.agent, self.stores.checkpoints, resume_from, turn
                    )
            else:
                request = await turn_request(self.stores.runs, run, earlier)
                outcome = await self.agent.run_turn(request, fresh=fresh)
        except Exception as error:
            if is_outage(error):
                # The store, not the run, failed: hand the run back for recovery.
                log.warning(
                    "store unavailable mid-run; it will be taken over again",
                    extra={"run_id": run.run_id, "error": type(error).__name__},
                )
                return False
            log.exception("run failed", extra={"run_id": run.run_id})
            run_events.failed(run.run_id, error=type(error).__name__)
            if await self.questions.finish(
                run.run_id, RunStatus.FAILED, at=self.clock(), text=RUN_FAILED, failed=True
            ):
                self.metrics.runs_finished.labels(status="failed").inc()
            return True
        if resume_from is not None:
            self.metrics.resume_seconds.observe(time.perf_counter() - started)
        match outcome:
            case TurnSuspended(interrupt=interrupt):
                # The ledger row marked the run paused and owes the post, in one write.
                self.views.remember_asked(
                    interrupt.interrupt_id, interrupt.token, expires_at=interrupt.expires_at
                )
                run_events.asked(run.run_id, interrupt.interrupt_id, interaction=interrupt.name)
            case TurnCompleted(text=text, unjournaled=steps):
                # The final reply is journaled with the ending, in one write.
                if await self.questions.finish(
                    run.run_id, RunStatus.COMPLETED, at=self.clock(), text=text, journal=steps
                ):
                    run_events.completed(run.run_id)
                    self.metrics.runs_finished.labels(status="completed").inc()
            case _:
                assert_never(outcome)
        return True


# Where the composition root puts the service on the aiohttp app, for the surfaces' handlers.
RUN_SERVICE = web.AppKey("run_service", RunService)
