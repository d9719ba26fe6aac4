"""Reads of issued questions on SQLite, and the cross-scope attempts kept on them.

The writes of a question's life are the lifecycle's, applied by ``_unit``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any, Literal

from bot.stores._rows import (
    PAUSE_COLUMNS,
    dump,
    pauses_from_rows,
)
from bot.stores.records import (
    MAX_CROSS_SCOPE_KEPT,
    Question,
    QuestionStatus,
    RunStatus,
)
from bot.stores.sqlite._db import Database, transaction
from bot.stores.sqlite._rows import pauses_query
from bot.stores.sqlite._unit import SqliteUnit

_OUTSTANDING = str(QuestionStatus.OUTSTANDING)
_PAUSED = str(RunStatus.PAUSED)
_RUNNING = str(RunStatus.RUNNING)
_GET_PAUSE = pauses_query("WHERE p.interrupt_id = ?", "p.seq")
_GET_ONE_PAUSE = (
    f"SELECT {', '.join(PAUSE_COLUMNS)}, EXISTS (SELECT 1 FROM cross_scope_attempts AS a"  # noqa: S608 - our own identifiers
    " WHERE a.interrupt_id = pauses.interrupt_id) AS attempted FROM pauses WHERE interrupt_id = ?"
)
_OUTSTANDING_PAUSES = pauses_query("WHERE p.status = ? AND (? IS NULL OR p.scope = ?)", "p.seq")
_OVERDUE_PAUSES = pauses_query("WHERE p.status = ? AND p.expires_at <= ?", "p.expires_at, p.seq")
# The ids travel as one JSON array, so the SQL text (and its cached
# statement) is the same however many runs are asked for.
_PAUSES_OF_RUNS = pauses_query(
    "WHERE p.run_id IN (SELECT value FROM json_each(?))", "p.issued_at, p.seq"
)
_INSERT_ATTEMPT = (
    "INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at) VALUES (?, ?, ?)"
)
_TRIM_ATTEMPTS = (
    "DELETE FROM cross_scope_attempts WHERE interrupt_id = ? AND seq NOT IN"
    " (SELECT seq FROM cross_scope_attempts WHERE interrupt_id = ? ORDER BY seq DESC LIMIT ?)"
)
_NO_LIMIT = -1


def _select_pauses(
    conn: sqlite3.Connection, query: str, params: tuple[Any, ...], limit: int = _NO_LIMIT
) -> list[Question]:
    return pauses_from_rows(conn.execute(query, (*params, limit)))


def _paused_event(record: Question) -> tuple[Any, ...]:
    """The audit row of a question asked, written with the question itself."""
    detail = dump({"name": record.name})
    return (record.issued_at, "paused", record.run_id, record.interrupt_id, "", detail)


class SqliteLedger:
    """Issued questions; cross-scope attempts live in their own table, in insertion order."""

    def __init__(self, db: Database, unit: SqliteUnit) -> None:
        self._db = db
        self._unit = unit

    async def get(self, interrupt_id: str) -> Question | None:
        return await self._unit.question(interrupt_id)

    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None:
        await self._update(interrupt_id, "message_ref", dump(ref))

    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None:
        attempt_json = dump(attempt)

        def record(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                # The memory ledger raises KeyError for an unknown id; so do we.
                known = conn.execute(
                    "SELECT 1 FROM pauses WHERE interrupt_id = ?", (interrupt_id,)
                ).fetchone()
                if known is None:
                    raise KeyError(interrupt_id)
                conn.execute(_INSERT_ATTEMPT, (interrupt_id, attempt_json, time.time()))
                conn.execute(_TRIM_ATTEMPTS, (interrupt_id, interrupt_id, MAX_CROSS_SCOPE_KEPT))
                conn.execute(
                    "UPDATE pauses SET cross_scope_count = cross_scope_count + 1"
                    " WHERE interrupt_id = ?",
                    (interrupt_id,),
                )

        await self._db.run(record)

    async def outstanding(self, *, scope: str | None = None) -> list[Question]:
        # In the worker: the list grows with the table, not with a limit.
        return await self._db.run_in_worker(
            lambda conn: _select_pauses(conn, _OUTSTANDING_PAUSES, (_OUTSTANDING, scope, scope))
        )

    async def overdue(self, now: float, *, limit: int = 100) -> list[Question]:
        return await self._db.run(
            lambda conn: _select_pauses(conn, _OVERDUE_PAUSES, (_OUTSTANDING, now), max(limit, 0))
        )

    async def for_runs(self, run_ids: Sequence[str]) -> list[Question]:
        ids = json.dumps(list(run_ids))
        return await self._db.run(lambda conn: _select_pauses(conn, _PAUSES_OF_RUNS, (ids,)))

    async def _update(self, interrupt_id: str, column: Literal["message_ref"], value: Any) -> None:
        # One fixed text per column, so each keeps its cached statement.
        sql = f"UPDATE pauses SET {column} = ? WHERE interrupt_id = ?"  # noqa: S608 - a Literal column

        def update(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                if conn.execute(sql, (value, interrupt_id)).rowcount == 0:
                    raise KeyError(interrupt_id)

        await self._db.run(update)
