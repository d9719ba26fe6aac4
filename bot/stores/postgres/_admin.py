"""Admin reads and writes on PostgreSQL: ``pending`` by keyset, ``stats`` from counters.

As on SQLite (``bot.stores.sqlite._admin``): ``pending`` walks a partial
index of outstanding rows from the cursor; ``stats`` reads counters that
triggers keep (migration 6). Here many replicas close questions at once,
so the per-status counters are spread over 16 rows each (a close updates
one random shard), and ``stats`` sums them.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.questions.records import (
    PendingFilter,
    Question,
    QuestionStats,
    nearest_rank,
)
from bot.stores._rows import PENDING_SELECT, pending_cursor, pending_from_row
from bot.stores._sql import ANSWER_RANK, DELIVERY_COUNTS, ESCALATIONS, REFUSAL_COUNTS, numbered
from bot.stores.postgres._db import Conn, Database


def _pending_sql(where: PendingFilter) -> tuple[str, list[str]]:
    """The query and which filters it binds, in order after the cursor ($1)."""
    clauses = ["p.status = 'outstanding'", "p.seq > $1"]
    bound: list[str] = []
    for name, column in (("scope", "p.scope"), ("name", "p.name"), ("requester", "r.requester")):
        if getattr(where, name) is not None:
            bound.append(name)
            clauses.append(f"{column} = ${len(bound) + 1}")
    join = "JOIN" if where.requester is not None else "LEFT JOIN"
    sql = (
        f"{PENDING_SELECT} FROM pauses AS p {join} runs AS r ON r.run_id = p.run_id"
        f" WHERE {' AND '.join(clauses)} ORDER BY p.seq LIMIT ${len(bound) + 2}"
    )
    return sql, bound


_COUNTS = "SELECT status, SUM(n)::BIGINT AS n FROM pause_counts GROUP BY status"
_ANSWER_RANK = numbered(ANSWER_RANK)


@dataclass  # tests patch methods on the instance
class PostgresAdmin:
    """Admin reads; its counters are summed over their shards."""

    db: Database

    async def pending(
        self, *, where: PendingFilter, after: str | None = None, limit: int = 20
    ) -> list[tuple[Question, str, str, str]]:
        start = pending_cursor(after)
        sql, bound = _pending_sql(where)
        rows = await self.db.fetch(
            sql, start, *(getattr(where, name) for name in bound), max(limit, 0)
        )
        return [pending_from_row(row) for row in rows]

    async def stats(self) -> QuestionStats:
        async def stats(conn: Conn) -> QuestionStats:
            # Several reads under READ COMMITTED: a close landing between them can
            # shift a figure by one, which a dashboard of counts can live with.
            counts = {row["status"]: int(row["n"]) for row in await conn.fetch(_COUNTS)}
            refusals = {str(r["reason"]): int(r["n"]) for r in await conn.fetch(REFUSAL_COUNTS)}
            answered = counts.get("answered", 0)
            p50 = p90 = None
            if answered:
                p50 = await conn.fetchval(_ANSWER_RANK, nearest_rank(answered, 0.5))
                p90 = await conn.fetchval(_ANSWER_RANK, nearest_rank(answered, 0.9))
            deliveries = await conn.fetchrow(DELIVERY_COUNTS) or {"failed": 0, "retrying": 0}
            return QuestionStats(
                issued=sum(counts.values()),
                outstanding=counts.get("outstanding", 0),
                answered=answered,
                expired=counts.get("expired", 0),
                cancelled=counts.get("cancelled", 0),
                refusals=refusals,
                answer_seconds_p50=None if p50 is None else float(p50),
                answer_seconds_p90=None if p90 is None else float(p90),
                deliveries_failed=int(deliveries["failed"]),
                deliveries_retrying=int(deliveries["retrying"]),
                escalations=int(await conn.fetchval(ESCALATIONS)),
            )

        return await self.db.transaction(stats)
