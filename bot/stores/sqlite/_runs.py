"""Runs, their audit trail and their checkpoints, on SQLite."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from bot.stores._rows import (
    audit_from_row,
    audit_params,
    dump,
    run_from_row,
    run_params,
)
from bot.stores.records import (
    AuditEvent,
    ConversationSummary,
    RunRecord,
)
from bot.stores.sqlite._db import Database, transaction
from bot.stores.sqlite._rows import INSERT_RUN, SELECT_RUNS


class SqliteCheckpoints:
    """Turn state, versioned per run: the ids read ``run_id:version``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        state_json = dump(state)  # a bad state never takes the lock

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
                    (saved_id, run_id, version, state_json, time.time()),
                )
                return saved_id

        return await self._db.run(save)

    async def discard(self, checkpoint_id: str) -> None:
        def discard(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute("DELETE FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,))

        await self._db.run(discard)

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        def load(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT state FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
            ).fetchone()
            return None if row is None else str(row["state"])

        state = await self._db.run(load)
        return None if state is None else dict(json.loads(state))


# json_type: the memory backend matches only a string key equal to ``key``;
# conversation_key alone would also match a missing key ('') or a number.
_RUNS_IN_CONVERSATION = (
    f"{SELECT_RUNS} WHERE surface = ? AND conversation_key = ?"
    " AND json_type(conversation, '$.key') = 'text'"
    " ORDER BY created_at DESC, seq DESC LIMIT ?"
)
# Ties on last activity keep the order of each conversation's first run,
# as the memory backend's stable sort does.
_CONVERSATIONS = """
WITH ranked AS (
    SELECT conversation_key, text, created_at, seq,
        MAX(updated_at, created_at) AS active,
        ROW_NUMBER() OVER (PARTITION BY conversation_key ORDER BY created_at, seq) AS n
    FROM runs WHERE surface = ?
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
LIMIT ?
"""


class SqliteRuns:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, run: RunRecord) -> bool:
        params = run_params(run)

        started = (
            run.created_at,
            "started",
            run.run_id,
            "",
            run.requester,
            dump({"surface": run.surface}),
        )

        def create(conn: sqlite3.Connection) -> bool:
            with transaction(conn):
                if conn.execute(INSERT_RUN, params).rowcount == 0:
                    return False
                conn.execute(_INSERT_AUDIT, started)
                return True

        return await self._db.run(create)

    async def get(self, run_id: str) -> RunRecord | None:
        def get(conn: sqlite3.Connection) -> RunRecord | None:
            row = conn.execute(f"{SELECT_RUNS} WHERE run_id = ?", (run_id,)).fetchone()
            return None if row is None else run_from_row(row)

        return await self._db.run(get)

    async def recent(self, *, limit: int = 50) -> list[RunRecord]:
        def recent(conn: sqlite3.Connection) -> list[RunRecord]:
            rows = conn.execute(
                # seq breaks ties in creation order, as the memory backend's stable sort does.
                f"{SELECT_RUNS} ORDER BY created_at DESC, seq LIMIT ?",
                (max(limit, 0),),
            )
            return [run_from_row(row) for row in rows]

        return await self._db.run(recent)

    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        def in_conversation(conn: sqlite3.Connection) -> list[RunRecord]:
            # Newest first so LIMIT keeps the latest, then turned oldest first.
            rows = conn.execute(_RUNS_IN_CONVERSATION, (surface, key, max(limit, 0)))
            return [run_from_row(row) for row in rows][::-1]

        return await self._db.run(in_conversation)

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        def conversations(conn: sqlite3.Connection) -> list[ConversationSummary]:
            rows = conn.execute(_CONVERSATIONS, (surface, max(limit, 0)))
            return [
                ConversationSummary(
                    key=row["conversation_key"],
                    title=row["title"],
                    updated_at=row["last_active"],
                    runs=row["runs"],
                )
                for row in rows
            ]

        # In the worker: it reads every run of the surface, whatever the limit.
        return await self._db.run_in_worker(conversations)


_INSERT_AUDIT = (
    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail) VALUES (?, ?, ?, ?, ?, ?)"
)
_AUDIT_COLUMNS = "SELECT at, kind, run_id, interrupt_id, actor, detail FROM audit"
# Two texts rather than "? IS NULL OR run_id = ?", which would keep the
# planner off the run_id index and scan the whole table for a quiet run.
_RECENT_AUDIT = f"{_AUDIT_COLUMNS} ORDER BY id DESC LIMIT ?"
_RECENT_AUDIT_OF_RUN = f"{_AUDIT_COLUMNS} WHERE run_id = ? ORDER BY id DESC LIMIT ?"


class SqliteAudit:
    """Append-only: there is no UPDATE or DELETE on the audit table anywhere."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(self, event: AuditEvent) -> None:
        params = audit_params(event)

        def append(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute(_INSERT_AUDIT, params)

        await self._db.run(append)

    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]:
        query, params = (
            (_RECENT_AUDIT, (max(limit, 0),))
            if run_id is None
            else (_RECENT_AUDIT_OF_RUN, (run_id, max(limit, 0)))
        )
        return await self._db.run(
            lambda conn: [audit_from_row(row) for row in conn.execute(query, params)]
        )
