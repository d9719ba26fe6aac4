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

from bot.stores._rows import dump, load, pause_from_row, pause_params, pauses_from_rows
from bot.stores.handoff import Handoff, Owed
from bot.stores.postgres._pool import Conn, Database, changed
from bot.stores.postgres._rows import (
    INSERT_AUDIT,
    INSERT_OUTBOX,
    PENDING,
    UPSERT_PAUSE,
    notice,
    owed_columns,
    owed_from_row,
    pauses_query,
)
from bot.stores.records import (
    MAX_CROSS_SCOPE_KEPT,
    Closing,
    Delivery,
    DeliveryKind,
    PauseRecord,
    PauseStatus,
    RunStatus,
)

_OUTSTANDING = str(PauseStatus.OUTSTANDING)
_PAUSED = str(RunStatus.PAUSED)

# The whole spend in one statement (one round trip inside its transaction).
# ``spent``: the unique insert; a racing spend of the same id waits here for
# ours to commit, then inserts nothing. ``closed``: the conditional update,
# only if we spent and the pause is still outstanding. Then, for a closed
# pause only: its PAUSED run is owed a resume under the closer's lease, the
# close is audited, the edit of the posted question is put in the outbox
# (born claimed under the run's lease as it is after this spend) and every
# replica is told. Spent but not closed is rolled back by the caller.
_OWED_RUNS = (
    "(SELECT o.run_id, o.surface, r.conversation_key FROM owed AS o JOIN runs AS r USING (run_id))"
)
_SPEND = f"""
WITH spent AS (
    INSERT INTO spends (interrupt_id, "by", at, status) VALUES ($1, $2, $3, $4)
    ON CONFLICT (interrupt_id) DO NOTHING
    RETURNING interrupt_id
), closed AS (
    UPDATE pauses SET status = $4, answer = $5, closed_by = $2, closed_by_id = $6, closed_at = $3
    FROM spent WHERE pauses.interrupt_id = spent.interrupt_id AND pauses.status = '{_OUTSTANDING}'
        AND ($4 <> '{PauseStatus.EXPIRED}' OR pauses.expires_at <= $3)
    RETURNING pauses.*
), resumed AS (
    UPDATE runs SET status = '{RunStatus.RUNNING}', updated_at = $3, lease_owner = $7,
        lease_until = $8
    FROM closed WHERE runs.run_id = closed.run_id AND runs.status = '{_PAUSED}'
    RETURNING runs.run_id
), audited AS (
    INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)
    SELECT $3, $4, run_id, $1, $9, '{{}}' FROM closed
    RETURNING id
), owed AS (
    {INSERT_OUTBOX}
    SELECT r.run_id, r.surface, '{DeliveryKind.CLOSED}', $1, '{{}}', $3, '{PENDING}', 0, $3,
        CASE WHEN s.run_id IS NULL THEN COALESCE(r.lease_until, 0) ELSE COALESCE($8, 0) END,
        CASE WHEN s.run_id IS NULL THEN r.lease_owner ELSE $7 END, ''
    FROM closed JOIN runs AS r ON r.run_id = closed.run_id
    LEFT JOIN resumed AS s ON s.run_id = r.run_id
    RETURNING id, run_id, surface, claimed_by, claimed_until
), told AS (
    {notice(_OWED_RUNS)}
)
SELECT (SELECT COUNT(*) FROM spent) AS spent, c.*,
    (SELECT COUNT(*) FROM audited) + (SELECT COUNT(*) FROM told) AS done,
    ARRAY(SELECT a.attempt_json FROM cross_scope_attempts AS a
        WHERE a.interrupt_id = $1 ORDER BY a.seq) AS attempts,
    {owed_columns("c.run_id")}
FROM (SELECT 1) AS one LEFT JOIN closed AS c ON true
"""  # noqa: S608 - our own constants
# A new outstanding pause: the post is owed (born claimed under the run's
# lease as it is before this change), earlier closed pauses of the run count
# as resumed, the run waits on a person so nobody holds its lease, and every
# replica is told. Nothing at all for a pause of no known run (tests).
_PAUSED_AND_OWED = f"""
WITH run AS (
    SELECT run_id, surface, conversation_key, lease_owner, lease_until FROM runs
    WHERE run_id = $1
), owed AS (
    {INSERT_OUTBOX}
    SELECT run_id, surface, '{DeliveryKind.PUBLISH}', $2, '{{}}', $3, '{PENDING}', 0, $3,
        COALESCE(lease_until, 0), lease_owner, ''
    FROM run
    RETURNING id, surface, claimed_by, claimed_until
), resumed AS (
    UPDATE pauses SET resumed_at = $3 FROM run
    WHERE pauses.run_id = run.run_id AND pauses.status <> '{_OUTSTANDING}'
      AND pauses.resumed_at IS NULL
), paused AS (
    UPDATE runs SET status = '{_PAUSED}', updated_at = $3, lease_owner = '', lease_until = NULL
    FROM run WHERE runs.run_id = run.run_id
), told AS (
    {notice("run")}
)
SELECT (SELECT COUNT(*) FROM told) AS told, {owed_columns("$1")}
"""  # noqa: S608 - our own constants


class _NotSpent(Exception):
    """Raised inside ``spend``'s transaction so it rolls back."""


class PostgresConsumption:
    """Spent tokens, in the same database (and transaction) as the pauses they close."""

    def __init__(self, db: Database, handoff: Handoff) -> None:
        self._db = db
        self._handoff = handoff

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        params = (
            interrupt_id,
            closing.by,
            closing.at,
            str(closing.status),
            dump(closing.answer),  # a bad answer never reaches the database
            closing.by_id,
            closing.lease_owner,
            closing.lease_until,
            closing.by_id or closing.by,
        )

        async def spend(conn: Conn) -> Owed | None:
            row = await conn.fetchrow(_SPEND, *params)
            if row is None or row["run_id"] is None:
                # Spent before, unknown or already closed: undo our spends row too.
                raise _NotSpent
            # The edit shows the question as this close left it.
            closed = pause_from_row(row, [load(a) for a in row["attempts"]])
            edit = Delivery(
                0,
                closed.run_id,
                "",
                DeliveryKind.CLOSED,
                interrupt_id,
                next_at=closing.at,
                pause=closed,
            )
            return owed_from_row(row, edit)

        try:
            owed = await self._db.transaction(spend)
        except _NotSpent:
            return False
        self._handoff.owe(owed)
        return True


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
    """Issued pauses; cross-scope attempts live in their own table, in insertion order."""

    def __init__(self, db: Database, handoff: Handoff) -> None:
        self._db = db
        self._handoff = handoff

    async def issue(self, record: PauseRecord) -> None:
        params = pause_params(record)  # a bad payload never reaches the database
        attempts = [dump(a) for a in record.cross_scope_attempts]

        async def issue(conn: Conn) -> Owed | None:
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
                # The question asked is audited with the question itself.
                await conn.execute(
                    INSERT_AUDIT,
                    record.issued_at,
                    "paused",
                    record.run_id,
                    record.interrupt_id,
                    "",
                    dump({"name": record.name}),
                )
                row = await conn.fetchrow(
                    _PAUSED_AND_OWED, record.run_id, record.interrupt_id, record.issued_at
                )
                if row is not None:
                    post = Delivery(
                        0,
                        record.run_id,
                        "",
                        DeliveryKind.PUBLISH,
                        record.interrupt_id,
                        next_at=record.issued_at,
                        pause=record,
                    )
                    return owed_from_row(row, post)
            return None

        self._handoff.owe(await self._db.transaction(issue))

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

    async def outstanding(self, *, scope: str | None = None) -> list[PauseRecord]:
        return pauses_from_rows(await self._db.fetch(_OUTSTANDING_PAUSES, _OUTSTANDING, scope))

    async def overdue(self, now: float, *, limit: int = 100) -> list[PauseRecord]:
        async def overdue(conn: Conn) -> list[PauseRecord]:
            rows = await conn.fetch(_OVERDUE_PAUSES, _OUTSTANDING, now, max(limit, 0))
            return pauses_from_rows(rows)

        return await self._db.transaction(overdue)

    async def for_runs(self, run_ids: Sequence[str]) -> list[PauseRecord]:
        return pauses_from_rows(await self._db.fetch(_PAUSES_OF_RUNS, list(run_ids)))

    async def _update(
        self, interrupt_id: str, column: Literal["message_ref", "resumed_at"], value: Any
    ) -> None:
        sql = f"UPDATE pauses SET {column} = $1 WHERE interrupt_id = $2"  # noqa: S608 - a Literal column
        if not changed(await self._db.execute(sql, value, interrupt_id)):
            raise KeyError(interrupt_id)
