"""Runs, their audit trail and their checkpoints, on PostgreSQL."""

from __future__ import annotations

import json
import time
from typing import Any

from bot.stores._rows import audit_from_row, audit_params, dump, run_from_row, run_params
from bot.stores.handoff import Handoff
from bot.stores.postgres._pool import Conn, Database
from bot.stores.postgres._rows import (
    INSERT_AUDIT,
    INSERT_OUTBOX,
    INSERT_RUN,
    OUTSTANDING,
    PENDING,
    SELECT_RUNS,
    notice,
    owed_columns,
    owed_from_row,
)
from bot.stores.records import (
    AuditEvent,
    ConversationSummary,
    Delivery,
    DeliveryKind,
    RunRecord,
    RunStatus,
)

_RUNNING = str(RunStatus.RUNNING)
# Ends a RUNNING run once. ``ended`` locks the row (a concurrent finish waits,
# then finds it no longer RUNNING) and keeps the lease as it was, so the
# outcome's outbox row is born claimed under it while the same statement
# clears it. Earlier closed pauses count as resumed, the end is audited and
# every replica is told.
_FINISH = f"""
WITH ended AS (
    SELECT run_id, surface, conversation_key, lease_owner, lease_until FROM runs
    WHERE run_id = $1 AND status = '{_RUNNING}'
    FOR UPDATE
), updated AS (
    UPDATE runs SET status = $2, updated_at = $3, final_text = $4, lease_owner = '',
        lease_until = NULL
    FROM ended WHERE runs.run_id = ended.run_id
    RETURNING runs.run_id
), resumed AS (
    UPDATE pauses SET resumed_at = $3 FROM ended
    WHERE pauses.run_id = ended.run_id AND pauses.status <> '{OUTSTANDING}'
      AND pauses.resumed_at IS NULL
), audited AS (
    INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)
    SELECT $3, $5, run_id, '', '', '{{}}' FROM ended
), owed AS (
    {INSERT_OUTBOX}
    SELECT run_id, surface, '{DeliveryKind.OUTCOME}', '', $6, $3, '{PENDING}', 0, $3,
        COALESCE(lease_until, 0), lease_owner, ''
    FROM ended
    RETURNING id, surface, claimed_by, claimed_until
), told AS (
    {notice("ended")}
)
SELECT (SELECT COUNT(*) FROM updated) + 0 * (SELECT COUNT(*) FROM told) AS ended,
    {owed_columns("$1")}
"""  # noqa: S608 - our own constants
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
    def __init__(self, db: Database, handoff: Handoff) -> None:
        self._db = db
        self._handoff = handoff

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

    async def finish(
        self, run_id: str, status: RunStatus, *, at: float, text: str, failed: bool = False
    ) -> bool:
        kind = "failed" if failed else "completed"
        body = {"text": text, "failed": failed}
        # One statement: its own transaction, one round trip.
        row = await self._db.fetchrow(_FINISH, run_id, str(status), at, text, kind, dump(body))
        if row is None or not row["ended"]:
            return False
        outcome = Delivery(0, run_id, "", DeliveryKind.OUTCOME, body=body, next_at=at)
        self._handoff.owe(owed_from_row(row, outcome))
        return True

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
