"""Runs, their audit trail and their checkpoints, on PostgreSQL."""

from __future__ import annotations

import json
import time
from typing import Any

from bot.stores._rows import audit_from_row, audit_params, dump, run_from_row, run_params
from bot.stores.postgres._db import Conn, Database
from bot.stores.postgres._rows import (
    INSERT_AUDIT,
    INSERT_RUN,
    SELECT_RUNS,
)
from bot.stores.records import (
    AuditEvent,
    ConversationSummary,
    RunRecord,
)

# jsonb_typeof: the memory backend matches only a string key equal to ``key``;
# conversation_key alone would also match a missing key ('') or a number.
_RUNS_IN_CONVERSATION = (
    f"{SELECT_RUNS} WHERE surface = $1 AND conversation_key = $2"
    " AND jsonb_typeof(conversation::jsonb -> 'key') = 'string'"
    " ORDER BY created_at DESC, seq DESC LIMIT $3"
)
# Ties on last activity keep the order of each conversation's first run,
# as the memory backend's stable sort does.
_CONVERSATIONS = """
WITH ranked AS (
    SELECT conversation_key, text, created_at, seq,
        GREATEST(updated_at, created_at) AS active,
        ROW_NUMBER() OVER (PARTITION BY conversation_key ORDER BY created_at, seq) AS n
    FROM runs WHERE surface = $1
)
SELECT conversation_key,
    MAX(CASE WHEN n = 1 THEN text END) AS title,
    MAX(active) AS last_active,
    COUNT(*) AS runs,
    MIN(created_at) AS first_at,
    MIN(CASE WHEN n = 1 THEN seq END) AS first_seq
FROM ranked
GROUP BY conversation_key
ORDER BY last_active DESC, first_at, first_seq
LIMIT $2
"""


class PostgresRuns:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, run: RunRecord) -> bool:
        params = run_params(run)
        started = (run.created_at, "started", run.run_id, "", run.requester)
        detail = dump({"surface": run.surface})

        async def create(conn: Conn) -> bool:
            if await conn.fetchval(INSERT_RUN, *params) is None:
                return False
            await conn.execute(INSERT_AUDIT, *started, detail)
            return True

        return await self._db.transaction(create)

    async def get(self, run_id: str) -> RunRecord | None:
        row = await self._db.fetchrow(f"{SELECT_RUNS} WHERE run_id = $1", run_id)
        return None if row is None else run_from_row(row)

    async def recent(self, *, limit: int = 50) -> list[RunRecord]:
        rows = await self._db.fetch(
            # seq breaks ties in creation order, as the memory backend's stable sort does.
            f"{SELECT_RUNS} ORDER BY created_at DESC, seq LIMIT $1",
            max(limit, 0),
        )
        return [run_from_row(row) for row in rows]

    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        # Newest first so LIMIT keeps the latest, then turned oldest first.
        rows = await self._db.fetch(_RUNS_IN_CONVERSATION, surface, key, max(limit, 0))
        return [run_from_row(row) for row in rows][::-1]

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        rows = await self._db.fetch(_CONVERSATIONS, surface, max(limit, 0))
        return [
            ConversationSummary(
                key=row["conversation_key"],
                title=row["title"],
                updated_at=row["last_active"],
                runs=row["runs"],
            )
            for row in rows
        ]


_AUDIT_COLUMNS = "SELECT at, kind, run_id, interrupt_id, actor, detail FROM audit"
_RECENT_AUDIT = f"{_AUDIT_COLUMNS} ORDER BY id DESC LIMIT $1"
_RECENT_AUDIT_OF_RUN = f"{_AUDIT_COLUMNS} WHERE run_id = $1 ORDER BY id DESC LIMIT $2"


class PostgresAudit:
    """Append-only: there is no UPDATE or DELETE on the audit table anywhere."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(self, event: AuditEvent) -> None:
        await self._db.execute(INSERT_AUDIT, *audit_params(event))

    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]:
        if run_id is None:
            rows = await self._db.fetch(_RECENT_AUDIT, max(limit, 0))
        else:
            rows = await self._db.fetch(_RECENT_AUDIT_OF_RUN, run_id, max(limit, 0))
        return [audit_from_row(row) for row in rows]


# Saves of one run queue on a transaction-scoped lock of their own, so two
# replicas cannot both read the same next version; other runs never wait.
_LOCK_RUN_VERSIONS = "SELECT pg_advisory_xact_lock(hashtextextended('chatops-bot:ckpt:' || $1, 0))"


class PostgresCheckpoints:
    """Turn state, versioned per run: the ids read ``run_id:version``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        state_json = dump(state)  # a bad state never reaches the database

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
                state_json,
                time.time(),
            )
            return saved_id

        return await self._db.transaction(save)

    async def discard(self, checkpoint_id: str) -> None:
        await self._db.execute("DELETE FROM checkpoints WHERE checkpoint_id = $1", checkpoint_id)

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        state = await self._db.fetchval(
            "SELECT state FROM checkpoints WHERE checkpoint_id = $1", checkpoint_id
        )
        return None if state is None else dict(json.loads(state))
