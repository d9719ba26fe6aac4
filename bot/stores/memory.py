"""In-process stores: tests and single-process experiments only.

Nothing here survives a restart, and a token spent in one process is still
unspent in another; ``redemption_is_shared`` reports False for it.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

from bot.stores._memory_admin import MemoryAdmin
from bot.stores._memory_installations import MemoryInstallations
from bot.stores.handoff import Handoff, Owed
from bot.stores.records import (
    MAX_CROSS_SCOPE_KEPT,
    AuditEvent,
    Closing,
    ConversationSummary,
    Delivery,
    DeliveryKind,
    DeliveryState,
    PauseRecord,
    PauseStatus,
    RunRecord,
    RunStatus,
)


class MemoryLedger:
    """Pauses; with ``effects`` wired (as ``MemoryStores`` does) it keeps the
    other stores in step exactly as a backend's single transaction would."""

    def __init__(self, effects: _Effects | None = None) -> None:
        self.rows: dict[str, PauseRecord] = {}
        # Indexes, as the SQL backends have: pause ids by run, paused calls.
        self._of_run: dict[str, list[str]] = {}
        self._calls: set[tuple[str, str]] = set()
        self.seqs: dict[str, int] = {}
        self._effects = effects

    async def issue(self, record: PauseRecord) -> None:
        known = record.interrupt_id in self.rows
        call = (record.run_id, record.tool_call_id)
        if not known:
            if call in self._calls:
                raise ValueError(f"call {call[1]!r} of {call[0]!r} paused already")
            self._calls.add(call)
            self._of_run.setdefault(record.run_id, []).append(record.interrupt_id)
            self.seqs[record.interrupt_id] = len(self.seqs)
        self.rows[record.interrupt_id] = record
        if self._effects is not None and not known and record.status is PauseStatus.OUTSTANDING:
            self._effects.paused(record, self)

    async def get(self, interrupt_id: str) -> PauseRecord | None:
        return self.rows.get(interrupt_id)

    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None:
        self._replace(interrupt_id, message_ref=dict(ref))

    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None:
        row = self.rows[interrupt_id]
        kept = (*row.cross_scope_attempts, attempt)[-MAX_CROSS_SCOPE_KEPT:]
        self._replace(
            interrupt_id, cross_scope_attempts=kept, cross_scope_count=row.cross_scope_count + 1
        )

    async def outstanding(self, *, scope: str | None = None) -> list[PauseRecord]:
        return [
            row
            for row in self.rows.values()
            if row.status is PauseStatus.OUTSTANDING and scope in (None, row.scope)
        ]

    async def overdue(self, now: float, *, limit: int = 100) -> list[PauseRecord]:
        due = [row for row in await self.outstanding() if row.expires_at <= now]
        return sorted(due, key=lambda row: row.expires_at)[:limit]

    async def for_runs(self, run_ids: Sequence[str]) -> list[PauseRecord]:
        ids = {i for run_id in run_ids for i in self._of_run.get(run_id, ())}
        # Ties keep issue order, as the SQL backends' sequence column does.
        return [
            self.rows[i] for i in sorted(ids, key=lambda i: (self.rows[i].issued_at, self.seqs[i]))
        ]

    def close_outstanding(self, interrupt_id: str, closing: Closing) -> bool:
        row = self.rows.get(interrupt_id)
        if row is None or row.status is not PauseStatus.OUTSTANDING:
            return False
        if closing.status is PauseStatus.EXPIRED and row.expires_at > closing.at:
            return False  # extended since the sweeper listed it
        self._replace(
            interrupt_id,
            status=closing.status,
            answer=closing.answer,
            closed_by=closing.by,
            closed_by_id=closing.by_id,
            closed_at=closing.at,
        )
        if self._effects is not None:
            self._effects.closed(self.rows[interrupt_id], closing)
        return True

    def mark_run_resumed(self, run_id: str, at: float) -> None:
        for interrupt_id in self._of_run.get(run_id, ()):
            row = self.rows[interrupt_id]
            if row.status is not PauseStatus.OUTSTANDING and row.resumed_at is None:
                self._replace(interrupt_id, resumed_at=at)

    def _replace(self, interrupt_id: str, **changes: Any) -> None:
        self.rows[interrupt_id] = dataclasses.replace(self.rows[interrupt_id], **changes)


class InMemoryConsumption:
    """Spent tokens of this process only; see ``redemption_is_shared``.

    With a ledger, a spend also closes that ledger's row. Without one (the
    capability's default) it is a record of spent ids and nothing more, so
    a token is still single-use within the process.
    """

    def __init__(self, ledger: MemoryLedger | None = None) -> None:
        self._ledger = ledger
        self._spent: set[str] = set()

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        # No await between the check and the write: one event loop makes it atomic.
        if interrupt_id in self._spent:
            return False
        if self._ledger is not None and not self._ledger.close_outstanding(interrupt_id, closing):
            return False
        self._spent.add(interrupt_id)
        return True


class MemoryCheckpoints:
    def __init__(self) -> None:
        self.saved: dict[str, dict[str, Any]] = {}

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        checkpoint_id = checkpoint_id or f"{run_id}:{uuid.uuid4().hex[:12]}"
        if checkpoint_id in self.saved:
            raise KeyError(f"checkpoint {checkpoint_id!r} exists already")
        self.saved[checkpoint_id] = state
        return checkpoint_id

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        return self.saved.get(checkpoint_id)

    async def discard(self, checkpoint_id: str) -> None:
        self.saved.pop(checkpoint_id, None)


class MemoryRuns:
    def __init__(self, effects: _Effects | None = None) -> None:
        self.rows: dict[str, RunRecord] = {}
        self._in: dict[tuple[str, str], list[str]] = {}  # runs by (surface, conversation key)
        self._effects = effects

    async def create(self, run: RunRecord) -> bool:
        if run.run_id in self.rows:
            return False
        self.rows[run.run_id] = run
        key = run.conversation.get("key")
        if isinstance(key, str):
            self._in.setdefault((run.surface, key), []).append(run.run_id)
        if self._effects is not None:
            self._effects.started(run)
        return True

    async def get(self, run_id: str) -> RunRecord | None:
        return self.rows.get(run_id)

    async def finish(
        self, run_id: str, status: RunStatus, *, at: float, text: str, failed: bool = False
    ) -> bool:
        row = self.rows.get(run_id)
        if row is None or row.status is not RunStatus.RUNNING:
            return False
        ended = dataclasses.replace(row, status=status, updated_at=at, final_text=text)
        if self._effects is not None:
            self._effects.finished(ended, text, failed=failed)  # owed under the lease
        self.rows[run_id] = dataclasses.replace(ended, lease_owner="", lease_until=None)
        return True

    def replace(self, run_id: str, **changes: Any) -> None:
        if run_id in self.rows:
            self.rows[run_id] = dataclasses.replace(self.rows[run_id], **changes)

    async def recent(self, *, limit: int = 50) -> list[RunRecord]:
        return sorted(self.rows.values(), key=lambda r: r.created_at, reverse=True)[:limit]

    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        runs = [self.rows[run_id] for run_id in self._in.get((surface, key), ())]
        return sorted(runs, key=lambda r: r.created_at)[-limit:] if limit > 0 else []

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        grouped: dict[str, list[RunRecord]] = {}
        for run in sorted(self.rows.values(), key=lambda r: r.created_at):
            if run.surface == surface:
                grouped.setdefault(str(run.conversation.get("key", "")), []).append(run)
        summaries = [
            ConversationSummary(
                key=key,
                title=runs[0].text,
                updated_at=max(max(r.updated_at, r.created_at) for r in runs),
                runs=len(runs),
            )
            for key, runs in grouped.items()
        ]
        return sorted(summaries, key=lambda s: s.updated_at, reverse=True)[: max(limit, 0)]


class MemoryAudit:
    def __init__(self) -> None:
        self.events: list[AuditEvent] = []

    async def append(self, event: AuditEvent) -> None:
        self.events.append(event)

    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]:
        events = [e for e in self.events if run_id in (None, e.run_id)]
        return list(reversed(events))[:limit]


class MemoryLeases:
    """Leases on the memory runs' rows."""

    def __init__(self, runs: MemoryRuns) -> None:
        self._runs = runs

    async def acquire(self, run_id: str, owner: str, *, now: float, until: float) -> bool:
        row = self._runs.rows.get(run_id)
        if row is None or row.status is not RunStatus.RUNNING:
            return False
        free = row.lease_until is None or row.lease_until <= now or row.lease_owner == owner
        if free:
            self._runs.replace(run_id, lease_owner=owner, lease_until=until)
        return free

    async def renew(self, run_id: str, owner: str, *, until: float) -> bool:
        row = self._runs.rows.get(run_id)
        if row is None or row.lease_owner != owner:
            return False
        self._runs.replace(run_id, lease_until=until)
        return True

    async def release(self, run_id: str, owner: str) -> None:
        row = self._runs.rows.get(run_id)
        if row is not None and row.lease_owner == owner:
            self._runs.replace(run_id, lease_owner="", lease_until=None)

    async def lapsed(self, now: float, *, limit: int = 100) -> list[str]:
        return [
            row.run_id
            for row in self._runs.rows.values()
            if row.status is RunStatus.RUNNING
            and (row.lease_until is None or row.lease_until <= now)
        ][: max(limit, 0)]


class MemoryJournal:
    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    async def steps(self, run_id: str) -> dict[str, Any]:
        return dict(self.entries.get(run_id, {}))

    async def record(self, run_id: str, step: str, value: Any) -> None:
        self.entries.setdefault(run_id, {}).setdefault(step, value)


class MemoryOutbox:
    def __init__(self, ledger: MemoryLedger, runs: MemoryRuns) -> None:
        self.rows: dict[int, Delivery] = {}
        self.claims: dict[int, tuple[str, float]] = {}
        self._pending: set[int] = set()
        self._ledger = ledger
        self._runs = runs
        self._handoff = Handoff()

    @property
    def handoff(self) -> Handoff:
        return self._handoff

    def add(
        self,
        run: RunRecord,
        kind: DeliveryKind,
        interrupt_id: str = "",
        *,
        handed: bool = False,
        pause: PauseRecord | None = None,
        **body: Any,
    ) -> None:
        """Owe a message; ``handed``: hand it over too (``bot.stores.handoff``), as the
        SQL backends' issue, spend and finish do, with ``pause`` as the write left it."""
        delivery_id = len(self.rows) + 1
        row = Delivery(delivery_id, run.run_id, run.surface, kind, interrupt_id, dict(body))
        earlier = tuple(i for i in sorted(self._pending) if self.rows[i].run_id == run.run_id)
        self.rows[delivery_id] = row
        # Born claimed under the run's lease, as the SQL backends do.
        held_by, held_until = run.lease_owner, run.lease_until or 0.0
        self.claims[delivery_id] = (held_by, held_until)
        self._pending.add(delivery_id)
        if not handed:
            self._handoff.owed_elsewhere(interrupt_id)
            return
        # The stored row never carries the question; the handed copy does.
        handed_row = Delivery(
            delivery_id, run.run_id, run.surface, kind, interrupt_id, row.body, pause=pause
        )
        self._handoff.owe(Owed(handed_row, held_by, held_until, earlier))

    async def claim(
        self, now: float, *, until: float, owner: str, surfaces: Sequence[str], limit: int = 50
    ) -> list[Delivery]:
        first_of_run: dict[str, Delivery] = {}
        followed: set[str] = set()
        for delivery_id in sorted(self._pending):
            row = self.rows[delivery_id]
            if first_of_run.setdefault(row.run_id, row) is not row:
                followed.add(row.run_id)
        taken: list[Delivery] = []
        for row in first_of_run.values():
            holder, held_until = self.claims.get(row.delivery_id, ("", 0.0))
            free = held_until <= now or holder == owner
            if row.surface in surfaces and row.next_at <= now and free:
                if held_until <= now:
                    self.claims[row.delivery_id] = (owner, until)
                taken.append(dataclasses.replace(row, followed=row.run_id in followed))
        return taken[: max(limit, 0)]

    async def delivered(
        self, delivery_id: int, *, at: float, message_ref: dict[str, Any] | None = None
    ) -> None:
        row = self.rows[delivery_id]
        self.rows[delivery_id] = dataclasses.replace(row, state=DeliveryState.DONE)
        self._pending.discard(delivery_id)
        if message_ref is not None and row.interrupt_id in self._ledger.rows:
            await self._ledger.set_message_ref(row.interrupt_id, message_ref)

    async def retry(self, delivery_id: int, *, next_at: float, error: str) -> None:
        row = self.rows[delivery_id]
        self.rows[delivery_id] = dataclasses.replace(
            row, attempts=row.attempts + 1, next_at=next_at, last_error=error
        )
        self.claims.pop(delivery_id, None)

    async def failed(self, delivery_id: int, *, at: float, error: str) -> None:
        row = self.rows[delivery_id]
        self.rows[delivery_id] = dataclasses.replace(
            row, attempts=row.attempts + 1, state=DeliveryState.FAILED, last_error=error
        )
        self._pending.discard(delivery_id)
        self._runs.replace(row.run_id, delivery_error=error, updated_at=at)

    async def of_run(self, run_id: str) -> list[Delivery]:
        return [row for row in self.rows.values() if row.run_id == run_id]  # admins, tests


class _Effects:
    """What one backend transaction does beside its main write, for the memory stores."""

    def __init__(self) -> None:
        self.ledger: MemoryLedger | None = None
        self.runs: MemoryRuns | None = None
        self.audit: MemoryAudit | None = None
        self.outbox: MemoryOutbox | None = None

    def started(self, run: RunRecord) -> None:
        if self.audit is not None:
            detail = {"surface": run.surface}
            event = AuditEvent(run.created_at, "started", run.run_id, "", run.requester, detail)
            self.audit.events.append(event)

    def paused(self, record: PauseRecord, ledger: MemoryLedger) -> None:
        if self.audit is not None:
            detail = {"name": record.name}
            event = AuditEvent(
                record.issued_at, "paused", record.run_id, record.interrupt_id, "", detail
            )
            self.audit.events.append(event)
        run = self.runs.rows.get(record.run_id) if self.runs else None
        if run is None or self.runs is None or self.outbox is None:
            return
        ledger.mark_run_resumed(record.run_id, record.issued_at)
        self.runs.replace(
            run.run_id,
            status=RunStatus.PAUSED,
            updated_at=record.issued_at,
            lease_owner="",
            lease_until=None,
        )
        self.outbox.add(run, DeliveryKind.PUBLISH, record.interrupt_id, handed=True, pause=record)

    def closed(self, record: PauseRecord, closing: Closing) -> None:
        if self.audit is not None:
            self.audit.events.append(
                AuditEvent(
                    closing.at,
                    str(closing.status),
                    record.run_id,
                    record.interrupt_id,
                    closing.by_id or closing.by,
                )
            )
        run = self.runs.rows.get(record.run_id) if self.runs else None
        if run is None or self.runs is None or self.outbox is None:
            return
        if run.status is RunStatus.PAUSED:
            self.runs.replace(
                run.run_id,
                status=RunStatus.RUNNING,
                updated_at=closing.at,
                lease_owner=closing.lease_owner,
                lease_until=closing.lease_until,
            )
        closed_run = self.runs.rows[run.run_id]
        self.outbox.add(
            closed_run, DeliveryKind.CLOSED, record.interrupt_id, handed=True, pause=record
        )

    def finished(self, run: RunRecord, text: str, *, failed: bool) -> None:
        if self.ledger is not None:
            self.ledger.mark_run_resumed(run.run_id, run.updated_at)
        if self.audit is not None:
            kind = "failed" if failed else "completed"
            self.audit.events.append(AuditEvent(run.updated_at, kind, run.run_id))
        if self.outbox is not None:
            self.outbox.add(run, DeliveryKind.OUTCOME, handed=True, text=text, failed=failed)


class MemoryStores:
    """Every port in one process."""

    def __init__(self) -> None:
        effects = _Effects()
        self.ledger = MemoryLedger(effects)
        self.consumption = InMemoryConsumption(self.ledger)
        self.checkpoints = MemoryCheckpoints()
        self.runs = MemoryRuns(effects)
        self.audit = MemoryAudit()
        self.leases = MemoryLeases(self.runs)
        self.journal = MemoryJournal()
        self.outbox = MemoryOutbox(self.ledger, self.runs)
        self.admin = MemoryAdmin(self.ledger, self.runs, self.audit, self.outbox)
        effects.ledger, effects.runs = self.ledger, self.runs
        effects.audit, effects.outbox = self.audit, self.outbox
        self.installations = MemoryInstallations()

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        return None
