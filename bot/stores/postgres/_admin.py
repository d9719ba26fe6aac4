"""Admin reads and writes on PostgreSQL: ``pending`` by keyset, ``stats`` from counters.

As on SQLite (``bot.stores.sqlite._admin``): ``pending`` walks a partial
index of outstanding rows from the cursor; ``stats`` reads counters that
triggers keep (migration 6). Here many replicas close questions at once,
so the per-status counters are spread over 16 rows each (a close updates
one random shard), and ``stats`` sums them.
"""

from __future__ import annotations

import asyncpg

from bot.stores._rows import load, pauses_from_rows
from bot.stores.postgres._db import Conn, Database
from bot.stores.postgres._rows import INSERT_OUTBOX, PENDING, notice, pauses_query
from bot.stores.records import (
    OpenQuestion,
    PendingFilter,
    Question,
    QuestionStats,
    nearest_rank,
)

_COLUMNS = (
    "SELECT p.seq, p.interrupt_id, p.run_id, p.scope, p.name, p.payload, p.issued_at,"
    " p.expires_at, p.message_ref, COALESCE(r.requester, '') AS requester,"
    " COALESCE(r.surface, '') AS surface"
)


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
        f"{_COLUMNS} FROM pauses AS p {join} runs AS r ON r.run_id = p.run_id"
        f" WHERE {' AND '.join(clauses)} ORDER BY p.seq LIMIT ${len(bound) + 2}"
    )
    return sql, bound


_COUNTS = "SELECT status, SUM(n)::BIGINT AS n FROM pause_counts GROUP BY status"
_REFUSALS = "SELECT reason, n FROM refusal_counts WHERE n > 0"
_ANSWER_RANK = (
    "SELECT bucket FROM (SELECT bucket, SUM(n) OVER (ORDER BY bucket) AS upto"
    " FROM answer_times WHERE n > 0) AS t WHERE upto > $1 ORDER BY bucket LIMIT 1"
)
_DELIVERIES = (
    "SELECT (SELECT COUNT(*) FROM outbox WHERE state = 'failed') AS failed,"
    " (SELECT COUNT(*) FROM outbox WHERE state = 'pending' AND attempts > 0) AS retrying"
)
_GET = pauses_query("WHERE p.interrupt_id = $1", "p.seq")
_OWE = (
    f"WITH owed AS ({INSERT_OUTBOX}"  # noqa: S608 - our own constants
    f" SELECT run_id, surface, $2, $3, $4, $5, '{PENDING}', 0, $5, COALESCE(lease_until, 0),"
    " lease_owner, '' FROM runs WHERE run_id = $1 RETURNING run_id, surface),"
    " told AS ("
    + notice(
        "(SELECT o.run_id, o.surface, r.conversation_key FROM owed AS o"
        " JOIN runs AS r USING (run_id))"
    )
    + ") SELECT COUNT(*) FROM told"
)


class PostgresAdmin:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def pending(
        self, *, where: PendingFilter, after: str | None = None, limit: int = 20
    ) -> list[OpenQuestion]:
        try:
            start = int(after) if after else 0
        except ValueError:
            raise ValueError(
                f"{after!r} is not a page cursor; pass the one a page returned"
            ) from None
        sql, bound = _pending_sql(where)
        rows = await self._db.fetch(
            sql, start, *(getattr(where, name) for name in bound), max(limit, 0)
        )
        return [_open(row) for row in rows]

    async def stats(self) -> QuestionStats:
        async def stats(conn: Conn) -> QuestionStats:
            # Several reads under READ COMMITTED: a close landing between them can
            # shift a figure by one, which a dashboard of counts can live with.
            counts = {row["status"]: int(row["n"]) for row in await conn.fetch(_COUNTS)}
            refusals = {str(r["reason"]): int(r["n"]) for r in await conn.fetch(_REFUSALS)}
            answered = counts.get("answered", 0)
            p50 = p90 = None
            if answered:
                p50 = await conn.fetchval(_ANSWER_RANK, nearest_rank(answered, 0.5))
                p90 = await conn.fetchval(_ANSWER_RANK, nearest_rank(answered, 0.9))
            deliveries = await conn.fetchrow(_DELIVERIES) or {"failed": 0, "retrying": 0}
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
            )

        return await self._db.transaction(stats)


async def _get(conn: Conn, interrupt_id: str) -> Question:
    (record,) = pauses_from_rows(await conn.fetch(_GET, interrupt_id))
    return record


def _open(row: asyncpg.Record) -> OpenQuestion:
    return OpenQuestion(
        interrupt_id=row["interrupt_id"],
        run_id=row["run_id"],
        scope=row["scope"],
        name=row["name"],
        payload=load(row["payload"]),
        issued_at=row["issued_at"],
        expires_at=row["expires_at"],
        requester=row["requester"],
        surface=row["surface"],
        message_ref=load(row["message_ref"]),
        cursor=str(row["seq"]),
    )
