"""In-process stores: tests and single-process experiments only.

Nothing here survives a restart, and a token spent in one process is still
unspent in another; ``redemption_is_shared`` reports False for it.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

from bot.stores._memory_installations import MemoryInstallations
from bot.stores.records import (
    AuditEvent,
    Closing,
    ConversationSummary,
    PauseRecord,
    PauseStatus,
    RunRecord,
    RunStatus,
)


class MemoryLedger:
    def __init__(self) -> None:
        self.rows: dict[str, PauseRecord] = {}
        self.claims: dict[str, float] = {}

    async def issue(self, record: PauseRecord) -> None:
        self.rows[record.interrupt_id] = record

    async def get(self, interrupt_id: str) -> PauseRecord | None:
        return self.rows.get(interrupt_id)

    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None:
        self._replace(interrupt_id, message_ref=dict(ref))

    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None:
        row = self.rows[interrupt_id]
        self._replace(interrupt_id, cross_scope_attempts=(*row.cross_scope_attempts, attempt))

    async def mark_resumed(self, interrupt_id: str, at: float) -> None:
        self._replace(interrupt_id, resumed_at=at)

    async def claim_resume(self, interrupt_id: str, *, now: float, until: float) -> bool:
        row = self.rows.get(interrupt_id)
        if row is None or row.status is PauseStatus.OUTSTANDING or row.resumed_at is not None:
            return False
        if self.claims.get(interrupt_id, 0.0) > now:
            return False
        self.claims[interrupt_id] = until
        return True

    async def outstanding(self, *, scope: str | None = None) -> list[PauseRecord]:
        return [
            row
            for row in self.rows.values()
            if row.status is PauseStatus.OUTSTANDING and scope in (None, row.scope)
        ]

    async def overdue(self, now: float, *, limit: int = 100) -> list[PauseRecord]:
        due = [row for row in await self.outstanding() if row.expires_at <= now]
        return sorted(due, key=lambda row: row.expires_at)[:limit]

    async def unresumed(self) -> list[PauseRecord]:
        return [
            row
            for row in self.rows.values()
            if row.status is not PauseStatus.OUTSTANDING and row.resumed_at is None
        ]

    async def for_runs(self, run_ids: Sequence[str]) -> list[PauseRecord]:
        wanted = set(run_ids)
        rows = [row for row in self.rows.values() if row.run_id in wanted]
        return sorted(rows, key=lambda row: row.issued_at)

    def close_outstanding(self, interrupt_id: str, closing: Closing) -> bool:
        row = self.rows.get(interrupt_id)
        if row is None or row.status is not PauseStatus.OUTSTANDING:
            return False
        self._replace(
            interrupt_id,
            status=closing.status,
            answer=closing.answer,
            closed_by=closing.by,
            closed_at=closing.at,
        )
        return True

    def _replace(self, interrupt_id: str, **changes: Any) -> None:
        self.rows[interrupt_id] = dataclasses.replace(self.rows[interrupt_id], **changes)


class InMemoryConsumption:
    """Spent tokens of this process only; see ``redemption_is_shared``."""

    def __init__(self, ledger: MemoryLedger | None = None) -> None:
        self._ledger = ledger or MemoryLedger()
        self._spent: set[str] = set()

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        # No await between the check and the write: one event loop makes it atomic.
        if interrupt_id in self._spent:
            return False
        if not self._ledger.close_outstanding(interrupt_id, closing):
            return False
        self._spent.add(interrupt_id)
        return True


class MemoryCheckpoints:
    def __init__(self) -> None:
        self.saved: dict[str, dict[str, Any]] = {}

    async def save(self, run_id: str, state: dict[str, Any]) -> str:
        checkpoint_id = f"{run_id}:{uuid.uuid4().hex[:12]}"
        self.saved[checkpoint_id] = state
        return checkpoint_id

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        return self.saved.get(checkpoint_id)


class MemoryRuns:
    def __init__(self) -> None:
        self.rows: dict[str, RunRecord] = {}

    async def create(self, run: RunRecord) -> bool:
        if run.run_id in self.rows:
            return False
        self.rows[run.run_id] = run
        return True

    async def get(self, run_id: str) -> RunRecord | None:
        return self.rows.get(run_id)

    async def set_status(
        self, run_id: str, status: RunStatus, *, at: float, text: str = ""
    ) -> None:
        row = self.rows[run_id]
        self.rows[run_id] = dataclasses.replace(
            row, status=status, updated_at=at, final_text=text or row.final_text
        )

    async def recent(self, *, limit: int = 50) -> list[RunRecord]:
        return sorted(self.rows.values(), key=lambda r: r.created_at, reverse=True)[:limit]

    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        runs = [
            run
            for run in self.rows.values()
            if run.surface == surface and run.conversation.get("key") == key
        ]
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


class MemoryStores:
    """All five ports in one process."""

    def __init__(self) -> None:
        self.ledger = MemoryLedger()
        self.consumption = InMemoryConsumption(self.ledger)
        self.checkpoints = MemoryCheckpoints()
        self.runs = MemoryRuns()
        self.audit = MemoryAudit()
        self.installations = MemoryInstallations()

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        return None
