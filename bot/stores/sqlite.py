"""Durable stores in one SQLite file, shared safely by several processes.

Every port method is one sync function run as one transaction (or one
statement) by ``_sqlite_db.Database``: inline on the event loop when the
lock is free, else in its worker thread. Row mapping lives in
``_sqlite_rows``; the lifecycle's writes in ``_sqlite_unit``. Lists come
back in insertion order, and an update of an unknown id raises KeyError.
JSON columns hold dicts; a value that is not JSON-serialisable is refused
with TypeError when written rather than corrupting the row.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from bot.kernel.journal import Journal
from bot.questions.write import UnitOfWork
from bot.stores._migrations import migrate
from bot.stores._rows import (
    PAUSE_COLUMNS,
    audit_from_row,
    audit_params,
    dump,
    pauses_from_rows,
    run_from_row,
    run_params,
)
from bot.stores._sqlite_admin import SqliteAdmin
from bot.stores._sqlite_db import Database, transaction
from bot.stores._sqlite_durable import (
    SqliteJournal,
    SqliteLeases,
    SqliteOutbox,
)
from bot.stores._sqlite_installations import SqliteInstallations
from bot.stores._sqlite_rows import INSERT_RUN, SELECT_RUNS, pauses_query
from bot.stores._sqlite_unit import SqliteUnit
from bot.stores.ports import (
    AdminStore,
    Audit,
    Checkpoints,
    Installations,
    Leases,
    Ledger,
    Outbox,
    Runs,
)
from bot.stores.records import (
    MAX_CROSS_SCOPE_KEPT,
    AuditEvent,
    ConversationSummary,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)

_OUTSTANDING = str(QuestionStatus.OUTSTANDING)
_PAUSED = str(RunStatus.PAUSED)
_RUNNING = str(RunStatus.RUNNING)
_GET_PAUSE = pauses_query("WHERE p.interrupt_id = ?", "p.seq")
_GET_ONE_PAUSE = (
    f"SELECT {', '.join(PAUSE_COLUMNS)}, EXISTS (SELECT 1 FROM cross_scope_attempts AS a"  # noqa: S608 - our own identifiers
    " WHERE a.interrupt_id = pauses.interrupt_id) AS attempted FROM pauses WHERE interrupt_id = ?"
)
_OUTSTANDING_PAUSES = pauses_query("WHERE p.status = ? AND (? IS NULL OR p.scope = ?)", "p.seq")
_OVERDUE_PAUSES = pauses_query("WHERE p.status = ? AND p.expires_at <= ?", "p.expires_at, p.seq")
# The ids travel as one JSON array, so the SQL text (and its cached
# statement) is the same however many runs are asked for.
_PAUSES_OF_RUNS = pauses_query(
    "WHERE p.run_id IN (SELECT value FROM json_each(?))", "p.issued_at, p.seq"
)
_INSERT_ATTEMPT = (
    "INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at) VALUES (?, ?, ?)"
)
_TRIM_ATTEMPTS = (
    "DELETE FROM cross_scope_attempts WHERE interrupt_id = ? AND seq NOT IN"
    " (SELECT seq FROM cross_scope_attempts WHERE interrupt_id = ? ORDER BY seq DESC LIMIT ?)"
)
_NO_LIMIT = -1


def _select_pauses(
    conn: sqlite3.Connection, query: str, params: tuple[Any, ...], limit: int = _NO_LIMIT
) -> list[Question]:
    return pauses_from_rows(conn.execute(query, (*params, limit)))


def _paused_event(record: Question) -> tuple[Any, ...]:
    """The audit row of a question asked, written with the question itself."""
    detail = dump({"name": record.name})
    return (record.issued_at, "paused", record.run_id, record.interrupt_id, "", detail)


class SqliteLedger:
    """Issued questions; cross-scope attempts live in their own table, in insertion order."""

    def __init__(self, db: Database, unit: SqliteUnit) -> None:
        self._db = db
        self._unit = unit

    async def get(self, interrupt_id: str) -> Question | None:
        return await self._unit.question(interrupt_id)

    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None:
        await self._update(interrupt_id, "message_ref", dump(ref))

    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None:
        attempt_json = dump(attempt)

        def record(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                # The memory ledger raises KeyError for an unknown id; so do we.
                known = conn.execute(
                    "SELECT 1 FROM pauses WHERE interrupt_id = ?", (interrupt_id,)
                ).fetchone()
                if known is None:
                    raise KeyError(interrupt_id)
                conn.execute(_INSERT_ATTEMPT, (interrupt_id, attempt_json, time.time()))
                conn.execute(_TRIM_ATTEMPTS, (interrupt_id, interrupt_id, MAX_CROSS_SCOPE_KEPT))
                conn.execute(
                    "UPDATE pauses SET cross_scope_count = cross_scope_count + 1"
                    " WHERE interrupt_id = ?",
                    (interrupt_id,),
                )

        await self._db.run(record)

    async def outstanding(self, *, scope: str | None = None) -> list[Question]:
        # In the worker: the list grows with the table, not with a limit.
        return await self._db.run_in_worker(
            lambda conn: _select_pauses(conn, _OUTSTANDING_PAUSES, (_OUTSTANDING, scope, scope))
        )

    async def overdue(self, now: float, *, limit: int = 100) -> list[Question]:
        return await self._db.run(
            lambda conn: _select_pauses(conn, _OVERDUE_PAUSES, (_OUTSTANDING, now), max(limit, 0))
        )

    async def for_runs(self, run_ids: Sequence[str]) -> list[Question]:
        ids = json.dumps(list(run_ids))
        return await self._db.run(lambda conn: _select_pauses(conn, _PAUSES_OF_RUNS, (ids,)))

    async def _update(self, interrupt_id: str, column: Literal["message_ref"], value: Any) -> None:
        # One fixed text per column, so each keeps its cached statement.
        sql = f"UPDATE pauses SET {column} = ? WHERE interrupt_id = ?"  # noqa: S608 - a Literal column

        def update(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                if conn.execute(sql, (value, interrupt_id)).rowcount == 0:
                    raise KeyError(interrupt_id)

        await self._db.run(update)


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


class SqliteStores:
    """Every port over one SQLite file; open with ``await SqliteStores.open(path)``."""

    def __init__(self, db: Database) -> None:
        self._db = db
        # Typed as the ports: ``Stores`` declares plain (mutable, so invariant)
        # attributes, which the concrete classes would not match.
        unit = SqliteUnit(db)
        self.unit: UnitOfWork = unit
        self.ledger: Ledger = SqliteLedger(db, unit)
        self.checkpoints: Checkpoints = SqliteCheckpoints(db)
        self.runs: Runs = SqliteRuns(db)
        self.audit: Audit = SqliteAudit(db)
        self.leases: Leases = SqliteLeases(db)
        self.journal: Journal = SqliteJournal(db)
        self.outbox: Outbox = SqliteOutbox(db)
        self.installations: Installations = SqliteInstallations(db)
        self.admin: AdminStore = SqliteAdmin(db)

    @classmethod
    async def open(cls, path: str | Path) -> SqliteStores:
        """Open (creating it and its folders if needed) and migrate the file at ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await Database.open(path)
        try:
            # In the worker: it may wait for another process migrating the same file.
            await db.run_in_worker(lambda conn: migrate(conn, str(path)))
        except BaseException:
            await db.close()
            raise
        return cls(db)

    async def ping(self) -> None:
        await self._db.run(lambda conn: conn.execute("SELECT 1").fetchone())

    async def close(self) -> None:
        await self._db.close()
