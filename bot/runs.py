"""RunService: runs from chat messages, pauses out, answers in, resumes in the background.

Adapters call ``start`` and ``redeem`` and nothing else decides anything:
the checks live in ``Redeemer``, the words in ``bot.messages``. Every task
this service starts is owned, so shutdown can drain it; whatever a drain
cuts short stays closed-but-unresumed in the ledger and ``recover`` picks
it up at the next start.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, assert_never

from bot import run_events
from bot.human.capability import HumanInteractionCapability, claims_for
from bot.human.tokens import MintedPause
from bot.kernel.messages import Message
from bot.kernel.state import TurnRequest
from bot.kernel.turn import Agent, TurnCompleted, TurnOutcome, TurnPaused
from bot.messages import RUN_FAILED
from bot.metrics import Metrics
from bot.outcomes import Redeemed, RedeemOutcome, Responder
from bot.policy import AnswerPolicy, RequesterOrApprovers
from bot.redeem import Redeemer
from bot.resume import resume_turn
from bot.stores.ports import Stores
from bot.stores.records import (
    AuditEvent,
    Closing,
    ConversationSummary,
    PauseRecord,
    PauseStatus,
    RunRecord,
    RunStatus,
)
from bot.surfaces import Conversation, Surface

log = logging.getLogger(__name__)

# How long a process may take to resume a run before another may try: long
# enough for several slow model calls, short enough to heal after a crash.
RESUME_CLAIM_SECONDS = 600.0
# Finished runs of the same conversation replayed to the model as context.
HISTORY_RUNS = 10
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class QuestionView:
    """A question as a surface redraws it; ``token`` only while it is open."""

    record: PauseRecord
    token: str = ""


@dataclass(frozen=True, slots=True)
class RunView:
    run: RunRecord
    questions: tuple[QuestionView, ...] = ()


class RunService:
    """The one place a run's life is driven, for every surface."""

    def __init__(
        self,
        *,
        agent: Agent,
        capability: HumanInteractionCapability,
        stores: Stores,
        surfaces: Mapping[str, Surface] | None = None,
        policy: AnswerPolicy | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.agent = agent
        self.capability = capability
        self.stores = stores
        self.surfaces: dict[str, Surface] = dict(surfaces or {})
        self.metrics = metrics or Metrics()
        self.clock = clock
        self._redeemer = Redeemer(
            capability=capability,
            stores=stores,
            policy=policy or RequesterOrApprovers(),
            clock=clock,
        )
        self._tasks: set[asyncio.Task[None]] = set()

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
        (None), in this process or any other sharing the store.
        """
        now = self.clock()
        run = RunRecord(
            run_id=_run_id(where, key),
            scope=where.scope,
            surface=where.surface,
            requester=who.id,
            text=text,
            created_at=now,
            updated_at=now,
            conversation=where.to_json(),
        )
        history = await self._history_of(where)
        if not await self.stores.runs.create(run):
            log.info("duplicate start ignored", extra={"run_id": run.run_id})
            return None
        await self._audit("started", run.run_id, "", who.id, {"surface": where.surface})
        run_events.started(run.run_id, by=who.id, surface=where.surface)
        request = TurnRequest(
            text=text,
            scope=where.scope,
            run_id=run.run_id,
            root_run_id=run.run_id,
            session_id=where.key,
            thread_id=where.thread,
            history=history,
        )
        self._spawn(self._drive(run, lambda: self.agent.run_turn(request)), f"turn {run.run_id}")
        return run

    async def _history_of(self, where: Conversation) -> tuple[Message, ...]:
        """Earlier finished exchanges of this conversation, so a follow-up continues it."""
        earlier = await self.stores.runs.in_conversation(
            where.surface, where.key, limit=HISTORY_RUNS
        )
        history: list[Message] = []
        for run in earlier:
            if run.status is RunStatus.COMPLETED and run.final_text:
                history += [Message("user", run.text), Message("assistant", run.final_text)]
        return tuple(history)

    async def redeem(
        self, token: str, answer: Mapping[str, Any], *, responder: Responder, scope: str
    ) -> RedeemOutcome:
        """Check and spend; on success the resume is owed and scheduled."""
        outcome = await self._redeemer.redeem(token, answer, responder=responder, scope=scope)
        if isinstance(outcome, Redeemed):
            self.metrics.pauses_answered.inc()
            # Claimed in the task, not here: the person's ack waits on nothing more.
            resume = self._claim_and_resume(outcome.closed, outcome.run)
            self._spawn(resume, f"resume {outcome.run_id}")
        else:
            self.metrics.refusals.labels(reason=type(outcome).__name__).inc()
        return outcome

    async def cancel(self, interrupt_id: str, *, by: Responder) -> bool:
        """Close an open question as cancelled and resume its run without an answer."""
        closing = Closing(PauseStatus.CANCELLED, by=by.display, at=self.clock())
        return await self._close(interrupt_id, closing, self.metrics.pauses_cancelled.inc)

    async def sweep(self, *, limit: int = 100) -> int:
        """Expire overdue questions; each resumes with an "expired" observation."""
        count = 0
        for record in await self.stores.ledger.overdue(self.clock(), limit=limit):
            closing = Closing(PauseStatus.EXPIRED, by="", at=self.clock())
            if await self._close(record.interrupt_id, closing, self.metrics.pauses_expired.inc):
                count += 1
        return count

    async def recover(self) -> int:
        """Resume every pause that closed but whose run was never continued.

        Run at start and by the sweeper, so a pause whose resumer died (its
        claim lapsed) is picked up by whichever process sees it next.
        """
        count = 0
        for record in await self.stores.ledger.unresumed():
            if await self._claim(record):
                log.info("recovering run", extra={"run_id": record.run_id})
                self._spawn(self._resumed(record), f"recover {record.run_id}")
                count += 1
        return count

    # -- reading, for surfaces that redraw from the store ----------------------

    async def history(self, surface: str, key: str, *, limit: int = 50) -> list[RunView]:
        """A conversation's runs with their questions, oldest first."""
        runs = await self.stores.runs.in_conversation(surface, key, limit=limit)
        pauses = await self.stores.ledger.for_runs([run.run_id for run in runs])
        by_run: dict[str, list[QuestionView]] = {}
        for record in pauses:
            token = self.token_for(record) if record.status is PauseStatus.OUTSTANDING else ""
            by_run.setdefault(record.run_id, []).append(QuestionView(record, token))
        return [RunView(run, tuple(by_run.get(run.run_id, ()))) for run in runs]

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        return await self.stores.runs.conversations(surface, limit=limit)

    def token_for(self, record: PauseRecord) -> str:
        """The token of an outstanding question, re-derived (tokens are never stored)."""
        return self.capability.signer.encode(MintedPause(claims_for(record)))

    # -- background work -------------------------------------------------------

    async def wait_idle(self) -> None:
        """Wait until no owned task is left (tasks may start more tasks)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def drain(self, grace_seconds: float) -> None:
        """Let owned tasks finish within the grace period, then cancel the rest."""
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=grace_seconds)
            for task in pending:
                task.cancel()
            if pending:
                log.warning("cancelled %d tasks at shutdown; recovery resumes them", len(pending))
                await asyncio.gather(*pending, return_exceptions=True)

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def _close(self, interrupt_id: str, closing: Closing, count: Callable[[], None]) -> bool:
        if not await self.stores.consumption.spend(interrupt_id, closing):
            return False
        count()
        record = await self.stores.ledger.get(interrupt_id)
        if record is not None:
            await self._audit(closing.status.value, record.run_id, interrupt_id, closing.by, {})
            run_events.closed(closing.status.value, record.run_id, interrupt_id, by=closing.by)
            self._spawn(self._claim_and_resume(record), f"resume {record.run_id}")
        return True

    async def _claim_and_resume(self, record: PauseRecord, run: RunRecord | None = None) -> None:
        if await self._claim(record):
            await self._resumed(record, run)

    async def _claim(self, record: PauseRecord) -> bool:
        now = self.clock()
        return await self.stores.ledger.claim_resume(
            record.interrupt_id, now=now, until=now + RESUME_CLAIM_SECONDS
        )

    async def _resumed(self, record: PauseRecord, run: RunRecord | None = None) -> None:
        run = run or await self.stores.runs.get(record.run_id)
        if run is None:
            # Marked resumed anyway, or every recovery pass would try again forever.
            log.error("closed pause names an unknown run", extra={"run_id": record.run_id})
            await self.stores.ledger.mark_resumed(record.interrupt_id, self.clock())
            return
        surface = self.surfaces.get(run.surface)
        if surface is not None:
            await _quietly(surface.show_closed(run, record), "show_closed")
        started = time.perf_counter()
        await self.stores.runs.set_status(run.run_id, RunStatus.RUNNING, at=self.clock())
        run_events.resumed(run.run_id, record.interrupt_id)
        await self._drive(run, lambda: resume_turn(self.agent, self.stores.checkpoints, record))
        await self.stores.ledger.mark_resumed(record.interrupt_id, self.clock())
        self.metrics.resume_seconds.observe(time.perf_counter() - started)

    async def _drive(self, run: RunRecord, step: Callable[[], Awaitable[TurnOutcome]]) -> None:
        surface = self.surfaces.get(run.surface)
        try:
            outcome = await step()
        except Exception as error:
            log.exception("run failed", extra={"run_id": run.run_id})
            await self.stores.runs.set_status(
                run.run_id, RunStatus.FAILED, at=self.clock(), text=RUN_FAILED
            )
            await self._audit("failed", run.run_id, "", "", {"error": type(error).__name__})
            run_events.failed(run.run_id, error=type(error).__name__)
            self.metrics.runs_finished.labels(status="failed").inc()
            if surface is not None:
                await _quietly(surface.post_outcome(run, RUN_FAILED, failed=True), "post_outcome")
            return
        match outcome:
            case TurnPaused(interrupt=interrupt):
                self.metrics.pauses_issued.inc()
                run_events.asked(run.run_id, interrupt.interrupt_id, interaction=interrupt.name)
                await self.stores.runs.set_status(run.run_id, RunStatus.PAUSED, at=self.clock())
                if surface is not None:
                    ref = await _quietly(surface.publish_question(run, interrupt), "publish")
                    if ref:
                        await self.stores.ledger.set_message_ref(interrupt.interrupt_id, ref)
            case TurnCompleted(text=text):
                await self.stores.runs.set_status(
                    run.run_id, RunStatus.COMPLETED, at=self.clock(), text=text
                )
                self.metrics.runs_finished.labels(status="completed").inc()
                run_events.completed(run.run_id)
                if surface is not None:
                    await _quietly(surface.post_outcome(run, text), "post_outcome")
            case _:
                assert_never(outcome)

    async def _audit(
        self, kind: str, run_id: str, interrupt_id: str, actor: str, detail: dict[str, Any]
    ) -> None:
        event = AuditEvent(self.clock(), kind, run_id, interrupt_id, actor, detail)
        await self.stores.audit.append(event)


def _run_id(where: Conversation, key: str | None) -> str:
    if key is None:
        return f"run_{secrets.token_hex(8)}"
    digest = hashlib.sha256(f"{where.surface}\x00{where.scope}\x00{key}".encode()).hexdigest()
    return f"run_{digest[:16]}"


async def _quietly(work: Awaitable[T], what: str) -> T | None:
    """A surface that cannot post must not fail the run: log it and go on."""
    try:
        return await work
    except Exception:
        log.exception("surface %s failed", what)
        return None
