"""Admin reads and writes on SQLite: ``pending`` by keyset, ``stats`` in SQL.

Both reads are built for large tables (see migration 6): ``pending`` walks a
partial index of outstanding rows from the cursor, and ``stats`` reads
counters that triggers keep, including a histogram of the time to answer
that percentiles are read from. No row is loaded into Python to compute a figure.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from bot.questions.records import (
    PendingFilter,
    Question,
    QuestionStats,
    nearest_rank,
)
from bot.stores._rows import PENDING_SELECT, pending_cursor, pending_from_row
from bot.stores._sql import ANSWER_RANK, DELIVERY_COUNTS, ESCALATIONS, REFUSAL_COUNTS
from bot.stores.sqlite._db import Database


def _pending_sql(where: PendingFilter) -> str:
    """One fixed text per combination of filters (eight at most), each on its index.

    ``? IS NULL OR ...`` would keep the planner off the partial indexes, so
    the clauses are chosen here from our own strings. Without ANALYZE
    statistics the planner prefers ``pauses_status_expires`` (an equality
    on status) and then sorts every open row, so the index is named: with
    ``INDEXED BY`` a plan that cannot use it is an error, never a scan.
    """
    clauses = ["p.status = 'outstanding'", "p.seq > ?"]
    if where.scope is not None:
        clauses.append("p.scope = ?")
    if where.name is not None:
        clauses.append("p.name = ?")
    if where.requester is not None:
        clauses.append("r.requester = ?")
        # From the person's runs (runs_requester), then their pauses: the cost
        # is that person's questions, not everyone's.
        source = "runs AS r INDEXED BY runs_requester CROSS JOIN pauses AS p ON r.run_id = p.run_id"
    else:
        index = "pauses_open_scope" if where.scope is not None else "pauses_open"
        if where.scope is None and where.name is not None:
            index = "pauses_open_name"
        source = f"pauses AS p INDEXED BY {index} LEFT JOIN runs AS r ON r.run_id = p.run_id"
    return f"{PENDING_SELECT} FROM {source} WHERE {' AND '.join(clauses)} ORDER BY p.seq LIMIT ?"


def _pending_params(where: PendingFilter, after: int, limit: int) -> tuple[Any, ...]:
    given = (where.scope, where.name, where.requester)
    return (after, *(value for value in given if value is not None), limit)


# Kept by triggers (migration 6) in every transaction that writes the rows.
_COUNTS = "SELECT status, n FROM pause_counts"


@dataclass  # tests patch methods on the instance
class SqliteAdmin:
    """Admin reads; its counters are one row per status, kept by triggers."""

    db: Database

    async def pending(
        self, *, where: PendingFilter, after: str | None = None, limit: int = 20
    ) -> list[tuple[Question, str, str, str]]:
        sql = _pending_sql(where)
        params = _pending_params(where, pending_cursor(after), max(limit, 0))

        def pending(conn: sqlite3.Connection) -> list[tuple[Question, str, str, str]]:
            return [pending_from_row(row) for row in conn.execute(sql, params)]

        return await self.db.run(pending)

    async def stats(self) -> QuestionStats:
        def stats(conn: sqlite3.Connection) -> QuestionStats:
            # One read transaction: every figure comes from the same snapshot.
            conn.execute("BEGIN")
            try:
                counts = {row["status"]: row["n"] for row in conn.execute(_COUNTS)}
                refusals = {
                    str(row["reason"]): int(row["n"]) for row in conn.execute(REFUSAL_COUNTS)
                }
                answered = int(counts.get("answered", 0))
                p50 = _rank(conn, nearest_rank(answered, 0.5)) if answered else None
                p90 = _rank(conn, nearest_rank(answered, 0.9)) if answered else None
                failed, retrying = conn.execute(DELIVERY_COUNTS).fetchone()
                (escalations,) = conn.execute(ESCALATIONS).fetchone()
            finally:
                conn.execute("COMMIT")
            return QuestionStats(
                issued=sum(int(n) for n in counts.values()),
                outstanding=int(counts.get("outstanding", 0)),
                answered=answered,
                expired=int(counts.get("expired", 0)),
                cancelled=int(counts.get("cancelled", 0)),
                refusals=refusals,
                answer_seconds_p50=p50,
                answer_seconds_p90=p90,
                deliveries_failed=int(failed),
                deliveries_retrying=int(retrying),
                escalations=int(escalations),
            )

        # Counters and a few thousand buckets at most: cheap enough for the loop.
        return await self.db.run(stats)


def _rank(conn: sqlite3.Connection, offset: int) -> float | None:
    row = conn.execute(ANSWER_RANK, (offset,)).fetchone()
    return None if row is None else float(row["bucket"])
