"""Admin reads and writes over the memory stores: scans, fine for tests, which is all
the memory backend is for. Semantics match ``bot.stores._sqlite_admin``."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from bot.stores.records import (
    AuditEvent,
    DeliveryKind,
    DeliveryState,
    OpenQuestion,
    PauseRecord,
    PauseStatus,
    PendingFilter,
    QuestionStats,
    RunRecord,
    answer_bucket,
    nearest_rank,
)

if TYPE_CHECKING:
    from bot.stores.memory import MemoryAudit, MemoryLedger, MemoryOutbox, MemoryRuns


class MemoryAdmin:
    """Admin reads by scanning: fine for tests, which is all the memory store is for."""

    def __init__(
        self, ledger: MemoryLedger, runs: MemoryRuns, audit: MemoryAudit, outbox: MemoryOutbox
    ) -> None:
        self._ledger = ledger
        self._runs = runs
        self._audit = audit
        self._outbox = outbox

    async def pending(
        self, *, where: PendingFilter, after: str | None = None, limit: int = 20
    ) -> list[OpenQuestion]:
        try:
            start = int(after) if after else 0
        except ValueError:
            raise ValueError(
                f"{after!r} is not a page cursor; pass the one a page returned"
            ) from None
        found: list[OpenQuestion] = []
        # Cursors count from 1, as the SQL backends' sequence does.
        for interrupt_id, seq in sorted(self._ledger.seqs.items(), key=lambda item: item[1]):
            row = self._ledger.rows[interrupt_id]
            run = self._runs.rows.get(row.run_id)
            requester = run.requester if run else ""
            if (
                seq + 1 <= start
                or row.status is not PauseStatus.OUTSTANDING
                or where.scope not in (None, row.scope)
                or where.name not in (None, row.name)
                or (where.requester is not None and (run is None or requester != where.requester))
            ):
                continue
            found.append(_open_question(row, run, str(seq + 1)))
            if len(found) >= limit:
                break
        return found

    async def stats(self) -> QuestionStats:
        rows = list(self._ledger.rows.values())
        by_status = {status: 0 for status in PauseStatus}
        for row in rows:
            by_status[row.status] += 1
        refusals: dict[str, int] = {}
        for event in self._audit.events:
            reason = event.detail.get("reason") if event.kind == "refused" else None
            if isinstance(reason, str):
                refusals[reason] = refusals.get(reason, 0) + 1
        took = sorted(
            answer_bucket((row.closed_at or row.issued_at) - row.issued_at)
            for row in rows
            if row.status is PauseStatus.ANSWERED
        )
        deliveries = list(self._outbox.rows.values())
        return QuestionStats(
            issued=len(rows),
            outstanding=by_status[PauseStatus.OUTSTANDING],
            answered=by_status[PauseStatus.ANSWERED],
            expired=by_status[PauseStatus.EXPIRED],
            cancelled=by_status[PauseStatus.CANCELLED],
            refusals=refusals,
            answer_seconds_p50=took[nearest_rank(len(took), 0.5)] if took else None,
            answer_seconds_p90=took[nearest_rank(len(took), 0.9)] if took else None,
            deliveries_failed=sum(d.state is DeliveryState.FAILED for d in deliveries),
            deliveries_retrying=sum(
                d.state is DeliveryState.PENDING and d.attempts > 0 for d in deliveries
            ),
        )

    async def extend(
        self, interrupt_id: str, *, expires_at: float, at: float, actor: str
    ) -> PauseRecord | None:
        row = self._ledger.rows.get(interrupt_id)
        if row is None or row.status is not PauseStatus.OUTSTANDING:
            return None
        self._ledger.rows[interrupt_id] = dataclasses.replace(row, expires_at=expires_at)
        detail = {"from": row.expires_at, "to": expires_at}
        self._audit.events.append(
            AuditEvent(at, "extended", row.run_id, interrupt_id, actor, detail)
        )
        run = self._runs.rows.get(row.run_id)
        if run is not None:
            self._outbox.add(run, DeliveryKind.REFRESH, interrupt_id)
        return self._ledger.rows[interrupt_id]

    async def repost(self, interrupt_id: str, *, at: float, actor: str) -> PauseRecord | None:
        row = self._ledger.rows.get(interrupt_id)
        if row is None or row.status is not PauseStatus.OUTSTANDING:
            return None
        detail = {"from": row.message_ref}
        self._audit.events.append(AuditEvent(at, "resent", row.run_id, interrupt_id, actor, detail))
        run = self._runs.rows.get(row.run_id)
        if run is not None:
            self._outbox.add(run, DeliveryKind.PUBLISH, interrupt_id, repost=True)
            if row.message_ref is not None:
                self._outbox.add(
                    run, DeliveryKind.MOVED, interrupt_id, previous_ref=row.message_ref
                )
        return row


def _open_question(row: PauseRecord, run: RunRecord | None, cursor: str) -> OpenQuestion:
    return OpenQuestion(
        interrupt_id=row.interrupt_id,
        run_id=row.run_id,
        scope=row.scope,
        name=row.name,
        payload=row.payload,
        issued_at=row.issued_at,
        expires_at=row.expires_at,
        requester=run.requester if run else "",
        surface=run.surface if run else "",
        message_ref=row.message_ref,
        cursor=cursor,
    )
