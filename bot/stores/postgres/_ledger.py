"""Reads of issued questions on PostgreSQL, and the cross-scope attempts kept on them.

The writes of a question's life (asking, closing, extending) are the
lifecycle's, applied by ``_unit``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from bot.stores._rows import dump, pauses_from_rows
from bot.stores.postgres._db import Conn, Database, changed
from bot.stores.postgres._rows import (
    pauses_query,
)
from bot.stores.records import (
    MAX_CROSS_SCOPE_KEPT,
    Question,
    QuestionStatus,
)

_OUTSTANDING = str(QuestionStatus.OUTSTANDING)
_GET_PAUSE = pauses_query("WHERE p.interrupt_id = $1", "p.seq")
_OUTSTANDING_PAUSES = pauses_query(
    "WHERE p.status = $1 AND ($2::text IS NULL OR p.scope = $2)", "p.seq"
)
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
    """Issued questions; cross-scope attempts live in their own table, in insertion order."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, interrupt_id: str) -> Question | None:
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

    async def outstanding(self, *, scope: str | None = None) -> list[Question]:
        return pauses_from_rows(await self._db.fetch(_OUTSTANDING_PAUSES, _OUTSTANDING, scope))

    async def overdue(self, now: float, *, limit: int = 100) -> list[Question]:
        async def overdue(conn: Conn) -> list[Question]:
            rows = await conn.fetch(_OVERDUE_PAUSES, _OUTSTANDING, now, max(limit, 0))
            return pauses_from_rows(rows)

        return await self._db.transaction(overdue)

    async def for_runs(self, run_ids: Sequence[str]) -> list[Question]:
        return pauses_from_rows(await self._db.fetch(_PAUSES_OF_RUNS, list(run_ids)))

    async def _update(
        self, interrupt_id: str, column: Literal["message_ref", "resumed_at"], value: Any
    ) -> None:
        sql = f"UPDATE pauses SET {column} = $1 WHERE interrupt_id = $2"  # noqa: S608 - a Literal column
        if not changed(await self._db.execute(sql, value, interrupt_id)):
            raise KeyError(interrupt_id)
