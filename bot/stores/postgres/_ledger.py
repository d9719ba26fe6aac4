"""Issued pauses and the spend that closes one, on PostgreSQL.

The spend is the one write every replica races on: 500 people pressing the
same button reach ``spend`` on whichever replica took their request. The
unique insert into ``spends`` decides it: PostgreSQL makes concurrent
inserts of one key wait for the first to commit or roll back, then the
others find the conflict and insert nothing. The conditional update of the
pause (still outstanding?) is the second guard, in the same transaction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from bot.stores._sqlite_rows import dump, pause_params
from bot.stores.postgres._pool import Conn, Database, changed
from bot.stores.postgres._rows import (
    INSERT_AUDIT,
    UPSERT_PAUSE,
    enqueue,
    mark_resumed,
    pauses_from_rows,
    pauses_query,
)
from bot.stores.records import (
    MAX_CROSS_SCOPE_KEPT,
    Closing,
    DeliveryKind,
    PauseRecord,
    PauseStatus,
    RunStatus,
)

_OUTSTANDING = str(PauseStatus.OUTSTANDING)
_PAUSED = str(RunStatus.PAUSED)
_SPEND = (
    'INSERT INTO spends (interrupt_id, "by", at, status) VALUES ($1, $2, $3, $4)'
    " ON CONFLICT (interrupt_id) DO NOTHING"
)
_CLOSE = (
    "UPDATE pauses SET status = $1, answer = $2, closed_by = $3, closed_by_id = $4,"
    " closed_at = $5 WHERE interrupt_id = $6 AND status = $7 RETURNING run_id"
)
# A closed pause owes its run a resume; only a PAUSED run changes.
_RESUME_OWED = (
    "UPDATE runs SET status = 'running', updated_at = $1, lease_owner = $2, lease_until = $3"
    " WHERE run_id = $4 AND status = $5"
)
_PAUSE_RUN = (
    "UPDATE runs SET status = $1, updated_at = $2, lease_owner = '', lease_until = NULL"
    " WHERE run_id = $3"
)


class _NotSpent(Exception):
    """Raised inside ``spend``'s transaction so it rolls back."""


class PostgresConsumption:
    """Spent tokens, in the same database (and transaction) as the pauses they close."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        answer = dump(closing.answer)  # a bad answer never reaches the database
        status = str(closing.status)

        async def spend(conn: Conn) -> None:
            # DO NOTHING rather than catching UniqueViolation: any other
            # constraint failure must propagate, not read as "spent".
            if changed(await conn.execute(_SPEND, interrupt_id, closing.by, closing.at, status)):
                run_id = await conn.fetchval(
                    _CLOSE,
                    status,
                    answer,
                    closing.by,
                    closing.by_id,
                    closing.at,
                    interrupt_id,
                    _OUTSTANDING,
                )
            else:
                run_id = None
            if run_id is None:
                # Spent, unknown or already closed: undo the spends row too.
                raise _NotSpent
            await conn.execute(
                _RESUME_OWED, closing.at, closing.lease_owner, closing.lease_until, run_id, _PAUSED
            )
            await conn.execute(
                INSERT_AUDIT,
                closing.at,
                status,
                run_id,
                interrupt_id,
                closing.by_id or closing.by,
                "{}",
            )
            await enqueue(
                conn, run_id, DeliveryKind.CLOSED, at=closing.at, interrupt_id=interrupt_id
            )

        try:
            await self._db.transaction(spend)
        except _NotSpent:
            return False
        return True


_GET_PAUSE = pauses_query("WHERE p.interrupt_id = $1", "p.seq")
_OUTSTANDING_PAUSES = pauses_query(
    "WHERE p.status = $1 AND ($2::text IS NULL OR p.scope = $2)", "p.seq"
)
_UNRESUMED_PAUSES = pauses_query("WHERE p.status <> $1 AND p.resumed_at IS NULL", "p.seq")
_PAUSES_OF_RUNS = pauses_query("WHERE p.run_id = ANY($1::text[])", "p.issued_at, p.seq")
# SKIP LOCKED: a pause another replica is closing right now (its spend holds
# the row) is left to that replica, so a sweep never waits on one.
_OVERDUE_PAUSES = pauses_query(
    "WHERE p.status = $1 AND p.expires_at <= $2",
    "p.expires_at, p.seq",
    limit="$3",
    lock="FOR UPDATE SKIP LOCKED",
)
_INSERT_ATTEMPT = (
    "INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at) VALUES ($1, $2, $3)"
)
_TRIM_ATTEMPTS = (
    "DELETE FROM cross_scope_attempts WHERE interrupt_id = $1 AND seq NOT IN"
    " (SELECT seq FROM cross_scope_attempts WHERE interrupt_id = $1 ORDER BY seq DESC LIMIT $2)"
)


class PostgresLedger:
    """Issued pauses; cross-scope attempts live in their own table, in insertion order."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def issue(self, record: PauseRecord) -> None:
        params = pause_params(record)  # a bad payload never reaches the database
        attempts = [dump(a) for a in record.cross_scope_attempts]

        async def issue(conn: Conn) -> None:
            inserted = await conn.fetchval(UPSERT_PAUSE, *params)
            if not inserted:
                # The record is the whole truth, attempts included.
                await conn.execute(
                    "DELETE FROM cross_scope_attempts WHERE interrupt_id = $1", record.interrupt_id
                )
            if attempts:
                now = time.time()
                await conn.executemany(
                    _INSERT_ATTEMPT, [(record.interrupt_id, a, now) for a in attempts]
                )
            if inserted and record.status is PauseStatus.OUTSTANDING:
                at = record.issued_at
                if not await enqueue(
                    conn,
                    record.run_id,
                    DeliveryKind.PUBLISH,
                    at=at,
                    interrupt_id=record.interrupt_id,
                ):
                    return  # a pause of no known run (tests): nobody to post to
                await mark_resumed(conn, record.run_id, at)
                # Nothing is owed until an answer, so nobody holds the lease.
                await conn.execute(_PAUSE_RUN, _PAUSED, at, record.run_id)

        await self._db.transaction(issue)

    async def get(self, interrupt_id: str) -> PauseRecord | None:
        rows = pauses_from_rows(await self._db.fetch(_GET_PAUSE, interrupt_id))
        return rows[0] if rows else None

    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None:
        await self._update(interrupt_id, "message_ref", dump(ref))

    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None:
        attempt_json = dump(attempt)

        async def record(conn: Conn) -> None:
            # Counting first locks the pause row, so concurrent attempts queue here.
            counted = await conn.execute(
                "UPDATE pauses SET cross_scope_count = cross_scope_count + 1"
                " WHERE interrupt_id = $1",
                interrupt_id,
            )
            if not changed(counted):
                raise KeyError(interrupt_id)  # as the memory ledger does
            await conn.execute(_INSERT_ATTEMPT, interrupt_id, attempt_json, time.time())
            await conn.execute(_TRIM_ATTEMPTS, interrupt_id, MAX_CROSS_SCOPE_KEPT)

        await self._db.transaction(record)

    async def mark_resumed(self, interrupt_id: str, at: float) -> None:
        await self._update(interrupt_id, "resumed_at", at)

    async def outstanding(self, *, scope: str | None = None) -> list[PauseRecord]:
        return pauses_from_rows(await self._db.fetch(_OUTSTANDING_PAUSES, _OUTSTANDING, scope))

    async def overdue(self, now: float, *, limit: int = 100) -> list[PauseRecord]:
        async def overdue(conn: Conn) -> list[PauseRecord]:
            rows = await conn.fetch(_OVERDUE_PAUSES, _OUTSTANDING, now, max(limit, 0))
            return pauses_from_rows(rows)

        return await self._db.transaction(overdue)

    async def unresumed(self) -> list[PauseRecord]:
        return pauses_from_rows(await self._db.fetch(_UNRESUMED_PAUSES, _OUTSTANDING))

    async def for_runs(self, run_ids: Sequence[str]) -> list[PauseRecord]:
        return pauses_from_rows(await self._db.fetch(_PAUSES_OF_RUNS, list(run_ids)))

    async def _update(
        self, interrupt_id: str, column: Literal["message_ref", "resumed_at"], value: Any
    ) -> None:
        sql = f"UPDATE pauses SET {column} = $1 WHERE interrupt_id = $2"  # noqa: S608 - a Literal column
        if not changed(await self._db.execute(sql, value, interrupt_id)):
            raise KeyError(interrupt_id)
