"""Saving turn state on PostgreSQL: versions numbered under a per-run lock."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from bot.stores._rows import dump, sealed_state
from bot.stores._shared import SqlCheckpointReads
from bot.stores.postgres._db import Conn, Database

# Saves of one run queue on a transaction-scoped lock of their own, so two
# replicas cannot both read the same next version; other runs never wait.
_LOCK_RUN_VERSIONS = "SELECT pg_advisory_xact_lock(hashtextextended('chatops-bot:ckpt:' || $1, 0))"


@dataclass
class PostgresCheckpoints(SqlCheckpointReads):
    """Turn state, versioned per run (ids ``run_id:version``); one run's saves queue on a lock."""

    db: Database

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        state_json = dump(state) or "{}"  # a bad state never reaches the database

        async def save(conn: Conn) -> str:
            await conn.execute(_LOCK_RUN_VERSIONS, run_id)
            version = await conn.fetchval(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM checkpoints WHERE run_id = $1", run_id
            )
            # A bound id is kept as given; the primary key refuses a reused one.
            saved_id = checkpoint_id or f"{run_id}:{version}"
            await conn.execute(
                "INSERT INTO checkpoints (checkpoint_id, run_id, version, state, created_at)"
                " VALUES ($1, $2, $3, $4, $5)",
                saved_id,
                run_id,
                version,
                sealed_state(saved_id, state_json),
                time.time(),
            )
            return saved_id

        return await self.db.transaction(save)
