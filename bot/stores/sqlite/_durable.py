"""Durable execution on SQLite: run leases, the step journal, the delivery outbox.

The outbox rows themselves are written by the lifecycle's writes
(``_unit``), with the state change that owes them, and marked delivered by
its ``delivered`` step (``_unit`` too).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.questions.records import (
    DeliveryState,
    OutboxRow,
)
from bot.stores._rows import PENDING, delivery_from_row
from bot.stores.sqlite._db import Database, transaction

# The oldest pending row of each run on each surface (one lane per surface: another
# surface's posts of a question on several routes do not wait behind a retry).
_DUE = """
SELECT o.*, o.claimed_by = ? AND o.claimed_until > ? AS mine,
    EXISTS (SELECT 1 FROM outbox AS f WHERE f.run_id = o.run_id AND f.surface = o.surface
        AND f.state = o.state AND f.id > o.id) AS followed
FROM outbox AS o
WHERE o.state = ? AND o.next_at <= ? AND (o.claimed_until <= ? OR o.claimed_by = ?)
  AND o.surface IN (SELECT value FROM json_each(?))
  AND NOT EXISTS (
      SELECT 1 FROM outbox AS e WHERE e.run_id = o.run_id AND e.surface = o.surface
        AND e.state = ? AND e.id < o.id)
ORDER BY o.id LIMIT ?
"""
# Re-checked under the write lock: another process may have claimed it since.
_TAKE = (
    "UPDATE outbox SET claimed_until = ?, claimed_by = ? WHERE id = ? AND state = ?"
    " AND claimed_until <= ? AND next_at <= ? RETURNING *"
)


@dataclass  # tests patch methods on the instance
class SqliteOutbox:
    """Owed messages; a claim takes due rows in one transaction under the write lock."""

    db: Database

    async def claim(
        self, now: float, *, until: float, owner: str, surfaces: Sequence[str], limit: int = 50
    ) -> list[OutboxRow]:
        due = (
            owner,
            now,
            PENDING,
            now,
            now,
            owner,
            json.dumps(list(surfaces)),
            PENDING,
            limit,
        )

        def claim(conn: sqlite3.Connection) -> list[OutboxRow]:
            # Read first, without the write lock: most passes find only rows
            # born ours, or nothing.
            found = conn.execute(_DUE, due).fetchall()
            taken = [
                delivery_from_row(row, followed=bool(row["followed"]))
                for row in found
                if row["mine"]
            ]
            others = [row for row in found if not row["mine"]]
            if others:
                with transaction(conn):
                    for row in others:
                        params = (until, owner, row["id"], PENDING, now, now)
                        took = conn.execute(_TAKE, params).fetchone()
                        if took is not None:
                            taken.append(delivery_from_row(took, followed=bool(row["followed"])))
            return sorted(taken, key=lambda row: row.delivery_id)

        return await self.db.run(claim)

    async def retry(self, delivery_id: int, *, next_at: float, error: str) -> None:
        sql = (
            "UPDATE outbox SET attempts = attempts + 1, next_at = ?, claimed_until = 0,"
            " claimed_by = '', last_error = ? WHERE id = ?"
        )
        await self.db.run(lambda conn: _changed(conn, sql, (next_at, error, delivery_id)))

    async def failed(self, delivery_id: int, *, at: float, error: str) -> None:
        def failed(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute(
                    "UPDATE outbox SET attempts = attempts + 1, state = ?, last_error = ?,"
                    " done_at = ? WHERE id = ?",
                    (str(DeliveryState.FAILED), error, at, delivery_id),
                )
                conn.execute(
                    "UPDATE runs SET delivery_error = ?, updated_at = ? WHERE run_id ="
                    " (SELECT run_id FROM outbox WHERE id = ?)",
                    (error, at, delivery_id),
                )

        await self.db.run(failed)

    async def of_run(self, run_id: str) -> list[OutboxRow]:
        sql = "SELECT * FROM outbox WHERE run_id = ? ORDER BY id"
        return await self.db.run(
            lambda conn: [delivery_from_row(row) for row in conn.execute(sql, (run_id,))]
        )


def _changed(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> bool:
    with transaction(conn):
        return bool(conn.execute(sql, params).rowcount)
