"""Admin reads and writes on SQLite: ``pending`` by keyset, ``stats`` in SQL.

Both reads are built for large tables (see migration 6): ``pending`` walks a
partial index of outstanding rows from the cursor, and ``stats`` reads
counters that triggers keep, including a histogram of the time to answer
that percentiles are read from. No row is loaded into Python to compute a figure.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from bot.stores._rows import dump, load, pauses_from_rows
from bot.stores._sqlite_db import Database, transaction
from bot.stores._sqlite_durable import enqueue
from bot.stores._sqlite_rows import pauses_query
from bot.stores.handoff import Handoff
from bot.stores.records import (
    DeliveryKind,
    OpenQuestion,
    PauseRecord,
    PendingFilter,
    QuestionStats,
    nearest_rank,
)

_PENDING_COLUMNS = (
    "SELECT p.seq, p.interrupt_id, p.run_id, p.scope, p.name, p.payload, p.issued_at,"
    " p.expires_at, p.message_ref, COALESCE(r.requester, '') AS requester,"
    " COALESCE(r.surface, '') AS surface"
)


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
    return f"{_PENDING_COLUMNS} FROM {source} WHERE {' AND '.join(clauses)} ORDER BY p.seq LIMIT ?"


def _pending_params(where: PendingFilter, after: int, limit: int) -> tuple[Any, ...]:
    given = (where.scope, where.name, where.requester)
    return (after, *(value for value in given if value is not None), limit)


def _cursor(after: str | None) -> int:
    if after is None or after == "":
        return 0
    try:
        return int(after)
    except ValueError:
        raise ValueError(f"{after!r} is not a page cursor; pass the one a page returned") from None


# Kept by triggers (migration 6) in every transaction that writes the rows.
_COUNTS = "SELECT status, n FROM pause_counts"
_REFUSALS = "SELECT reason, n FROM refusal_counts WHERE n > 0"
# The first bucket whose running total passes the rank (0-based).
_ANSWER_RANK = (
    "SELECT bucket FROM (SELECT bucket, SUM(n) OVER (ORDER BY bucket) AS upto"
    " FROM answer_times WHERE n > 0) WHERE upto > ? ORDER BY bucket LIMIT 1"
)
_DELIVERIES = (
    "SELECT (SELECT COUNT(*) FROM outbox WHERE state = 'failed') AS failed,"
    " (SELECT COUNT(*) FROM outbox WHERE state = 'pending' AND attempts > 0) AS retrying"
)
_GET_PAUSE = pauses_query("WHERE p.interrupt_id = ?", "p.seq")


class SqliteAdmin:
    def __init__(self, db: Database, handoff: Handoff) -> None:
        self._db = db
        self._handoff = handoff

    async def pending(
        self, *, where: PendingFilter, after: str | None = None, limit: int = 20
    ) -> list[OpenQuestion]:
        sql = _pending_sql(where)
        params = _pending_params(where, _cursor(after), max(limit, 0))

        def pending(conn: sqlite3.Connection) -> list[OpenQuestion]:
            return [
                OpenQuestion(
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
                for row in conn.execute(sql, params)
            ]

        return await self._db.run(pending)

    async def stats(self) -> QuestionStats:
        def stats(conn: sqlite3.Connection) -> QuestionStats:
            # One read transaction: every figure comes from the same snapshot.
            conn.execute("BEGIN")
            try:
                counts = {row["status"]: row["n"] for row in conn.execute(_COUNTS)}
                refusals = {str(row["reason"]): int(row["n"]) for row in conn.execute(_REFUSALS)}
                answered = int(counts.get("answered", 0))
                p50 = _rank(conn, nearest_rank(answered, 0.5)) if answered else None
                p90 = _rank(conn, nearest_rank(answered, 0.9)) if answered else None
                failed, retrying = conn.execute(_DELIVERIES).fetchone()
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
            )

        # Counters and a few thousand buckets at most: cheap enough for the loop.
        return await self._db.run(stats)

    async def extend(
        self, interrupt_id: str, *, expires_at: float, at: float, actor: str
    ) -> PauseRecord | None:
        def extend(conn: sqlite3.Connection) -> PauseRecord | None:
            with transaction(conn):
                row = conn.execute(
                    "SELECT run_id, expires_at FROM pauses"
                    " WHERE interrupt_id = ? AND status = 'outstanding'",
                    (interrupt_id,),
                ).fetchone()
                if row is None:
                    return None
                conn.execute(
                    "UPDATE pauses SET expires_at = ? WHERE interrupt_id = ?",
                    (expires_at, interrupt_id),
                )
                detail = dump({"from": row["expires_at"], "to": expires_at})
                _audit(conn, at, "extended", row["run_id"], interrupt_id, actor, detail)
                enqueue(conn, row["run_id"], DeliveryKind.REFRESH, at=at, interrupt_id=interrupt_id)
                return _get(conn, interrupt_id)

        extended = await self._db.run(extend)
        if extended is not None:
            self._handoff.owed_elsewhere(interrupt_id)
        return extended

    async def repost(self, interrupt_id: str, *, at: float, actor: str) -> PauseRecord | None:
        def repost(conn: sqlite3.Connection) -> PauseRecord | None:
            with transaction(conn):
                row = conn.execute(
                    "SELECT run_id, message_ref FROM pauses"
                    " WHERE interrupt_id = ? AND status = 'outstanding'",
                    (interrupt_id,),
                ).fetchone()
                if row is None:
                    return None
                run_id, previous = row["run_id"], load(row["message_ref"])
                _audit(conn, at, "resent", run_id, interrupt_id, actor, dump({"from": previous}))
                body = {"repost": True}
                enqueue(
                    conn, run_id, DeliveryKind.PUBLISH, at=at, interrupt_id=interrupt_id, body=body
                )
                if previous is not None:
                    moved = {"previous_ref": previous}
                    enqueue(
                        conn,
                        run_id,
                        DeliveryKind.MOVED,
                        at=at,
                        interrupt_id=interrupt_id,
                        body=moved,
                    )
                return _get(conn, interrupt_id)

        reposted = await self._db.run(repost)
        if reposted is not None:
            self._handoff.owed_elsewhere(interrupt_id)
        return reposted


def _rank(conn: sqlite3.Connection, offset: int) -> float | None:
    row = conn.execute(_ANSWER_RANK, (offset,)).fetchone()
    return None if row is None else float(row["bucket"])


def _get(conn: sqlite3.Connection, interrupt_id: str) -> PauseRecord:
    (record,) = pauses_from_rows(conn.execute(_GET_PAUSE, (interrupt_id, -1)))
    return record


def _audit(
    conn: sqlite3.Connection,
    at: float,
    kind: str,
    run_id: str,
    interrupt_id: str,
    actor: str,
    detail: str | None,
) -> None:
    conn.execute(
        "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (at, kind, run_id, interrupt_id, actor, detail or "{}"),
    )
