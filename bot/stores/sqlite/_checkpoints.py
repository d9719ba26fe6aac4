"""Saving turn state on SQLite: versions numbered under the write lock."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from bot.stores._rows import dump, sealed_state
from bot.stores._shared import SqlCheckpointReads
from bot.stores.sqlite._db import Database, transaction


@dataclass
class SqliteCheckpoints(SqlCheckpointReads):
    """Turn state, versioned per run (ids read ``run_id:version``), saved under the write lock."""

    db: Database

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        state_json = dump(state) or "{}"  # a bad state never takes the lock

        def save(conn: sqlite3.Connection) -> str:
            with transaction(conn):
                # Inside BEGIN IMMEDIATE, so no other writer can take the same version.
                (version,) = conn.execute(
                    "SELECT COALESCE(MAX(version), 0) + 1 FROM checkpoints WHERE run_id = ?",
                    (run_id,),
                ).fetchone()
                # A bound id is kept as given; the primary key refuses a reused one.
                saved_id = checkpoint_id or f"{run_id}:{version}"
                conn.execute(
                    "INSERT INTO checkpoints (checkpoint_id, run_id, version, state, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (saved_id, run_id, version, sealed_state(saved_id, state_json), time.time()),
                )
                return saved_id

        return await self.db.run(save)
