"""Durable stores in one SQLite file, shared safely by several processes.

Every port method is one sync function run as one transaction in the
database's worker thread (see ``_sqlite_db``). Semantics match
``bot.stores.memory`` method for method, including insertion order where the
memory backend returns it and KeyError for updates to an unknown id.
JSON columns hold dicts; a value that is not JSON-serialisable is refused
with TypeError when written rather than corrupting the row.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Literal

from bot.stores._migrations import migrate
from bot.stores._sqlite_db import Database, transaction
from bot.stores.ports import Audit, Checkpoints, Consumption, Ledger, Runs
from bot.stores.records import (
    AuditEvent,
    Closing,
    PauseRecord,
    PauseStatus,
    RunRecord,
    RunStatus,
)


def _dump(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class _NotSpent(Exception):
    """Raised inside ``spend``'s transaction so ``transaction`` rolls it back."""


class SqliteConsumption:
    """Spent tokens, in the same file (and transaction) as the ledger rows they close."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        def spend(conn: sqlite3.Connection) -> bool:
            try:
                with transaction(conn):
                    # DO NOTHING rather than catching IntegrityError: any other
                    # constraint failure must propagate, not read as "spent".
                    spent = conn.execute(
                        "INSERT INTO spends (interrupt_id, by, at, status) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT (interrupt_id) DO NOTHING",
                        (interrupt_id, closing.by, closing.at, str(closing.status)),
                    )
                    if spent.rowcount == 0:
                        raise _NotSpent
                    closed = conn.execute(
                        "UPDATE pauses SET status = ?, answer = ?, closed_by = ?, closed_at = ?"
                        " WHERE interrupt_id = ? AND status = ?",
                        (
                            str(closing.status),
                            _dump(closing.answer),
                            closing.by,
                            closing.at,
                            interrupt_id,
                            str(PauseStatus.OUTSTANDING),
                        ),
                    )
                    if closed.rowcount == 0:
                        # Unknown or already closed: undo the spends row too.
                        raise _NotSpent
            except _NotSpent:
                return False
            return True

        return await self._db.run(spend)


_PAUSE_COLUMNS = (
    "interrupt_id",
    "run_id",
    "scope",
    "name",
    "tool_call_id",
    "checkpoint_id",
    "payload",
    "issued_at",
    "expires_at",
    "root_run_id",
    "session_id",
    "thread_id",
    "status",
    "answer",
    "closed_by",
    "closed_at",
    "resumed_at",
    "message_ref",
)
_RUN_COLUMNS = (
    "run_id",
    "scope",
    "surface",
    "requester",
    "text",
    "created_at",
    "conversation",
    "status",
    "updated_at",
    "final_text",
)


def _upsert_sql(table: str, key: str, columns: tuple[str, ...]) -> str:
    # An upsert, not INSERT OR REPLACE: REPLACE deletes the row, giving it a
    # new seq (so a new place in insertion order) and cascading to children;
    # the memory backend's dict assignment keeps the row's place.
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != key)
    return (
        f"INSERT INTO {table} ({', '.join(columns)})"  # noqa: S608 - our own identifiers
        f" VALUES ({', '.join('?' for _ in columns)})"
        f" ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )


_UPSERT_PAUSE = _upsert_sql("pauses", "interrupt_id", _PAUSE_COLUMNS)
_UPSERT_RUN = _upsert_sql("runs", "run_id", _RUN_COLUMNS)
_SELECT_PAUSES = f"SELECT {', '.join(_PAUSE_COLUMNS)} FROM pauses"  # noqa: S608 - our own identifiers
_SELECT_RUNS = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs"  # noqa: S608 - our own identifiers


def _pause_from_row(conn: sqlite3.Connection, row: sqlite3.Row) -> PauseRecord:
    attempts = conn.execute(
        "SELECT attempt_json FROM cross_scope_attempts WHERE interrupt_id = ? ORDER BY seq",
        (row["interrupt_id"],),
    ).fetchall()
    return PauseRecord(
        interrupt_id=row["interrupt_id"],
        run_id=row["run_id"],
        scope=row["scope"],
        name=row["name"],
        tool_call_id=row["tool_call_id"],
        checkpoint_id=row["checkpoint_id"],
        payload=_load(row["payload"]),
        issued_at=row["issued_at"],
        expires_at=row["expires_at"],
        root_run_id=row["root_run_id"],
        session_id=row["session_id"],
        thread_id=row["thread_id"],
        status=PauseStatus(row["status"]),
        answer=_load(row["answer"]),
        closed_by=row["closed_by"],
        closed_at=row["closed_at"],
        resumed_at=row["resumed_at"],
        message_ref=_load(row["message_ref"]),
        cross_scope_attempts=tuple(_load(a["attempt_json"]) for a in attempts),
    )


def _select_pauses(
    conn: sqlite3.Connection, where: str, params: tuple[Any, ...]
) -> list[PauseRecord]:
    with transaction(conn, write=False):  # one snapshot: rows and their attempts agree
        rows = conn.execute(f"{_SELECT_PAUSES} {where}", params).fetchall()
        return [_pause_from_row(conn, row) for row in rows]


def _require_pause(conn: sqlite3.Connection, interrupt_id: str) -> None:
    # The memory ledger raises KeyError for an unknown id; so do we.
    if (
        conn.execute("SELECT 1 FROM pauses WHERE interrupt_id = ?", (interrupt_id,)).fetchone()
        is None
    ):
        raise KeyError(interrupt_id)


class SqliteLedger:
    """Issued pauses; cross-scope attempts live in their own table, in insertion order."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def issue(self, record: PauseRecord) -> None:
        def issue(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute(
                    _UPSERT_PAUSE,
                    (
                        record.interrupt_id,
                        record.run_id,
                        record.scope,
                        record.name,
                        record.tool_call_id,
                        record.checkpoint_id,
                        _dump(record.payload),
                        record.issued_at,
                        record.expires_at,
                        record.root_run_id,
                        record.session_id,
                        record.thread_id,
                        str(record.status),
                        _dump(record.answer),
                        record.closed_by,
                        record.closed_at,
                        record.resumed_at,
                        _dump(record.message_ref),
                    ),
                )
                # The record is the whole truth, attempts included.
                conn.execute(
                    "DELETE FROM cross_scope_attempts WHERE interrupt_id = ?",
                    (record.interrupt_id,),
                )
                now = time.time()
                conn.executemany(
                    "INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at)"
                    " VALUES (?, ?, ?)",
                    [(record.interrupt_id, _dump(a), now) for a in record.cross_scope_attempts],
                )

        await self._db.run(issue)

    async def get(self, interrupt_id: str) -> PauseRecord | None:
        rows = await self._db.run(
            lambda conn: _select_pauses(conn, "WHERE interrupt_id = ?", (interrupt_id,))
        )
        return rows[0] if rows else None

    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None:
        await self._update(interrupt_id, "message_ref", _dump(ref))

    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None:
        def record(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                _require_pause(conn, interrupt_id)
                conn.execute(
                    "INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at)"
                    " VALUES (?, ?, ?)",
                    (interrupt_id, _dump(attempt), time.time()),
                )

        await self._db.run(record)

    async def mark_resumed(self, interrupt_id: str, at: float) -> None:
        await self._update(interrupt_id, "resumed_at", at)

    async def outstanding(self, *, scope: str | None = None) -> list[PauseRecord]:
        return await self._db.run(
            lambda conn: _select_pauses(
                conn,
                "WHERE status = ? AND (? IS NULL OR scope = ?) ORDER BY seq",
                (str(PauseStatus.OUTSTANDING), scope, scope),
            )
        )

    async def overdue(self, now: float, *, limit: int = 100) -> list[PauseRecord]:
        return await self._db.run(
            lambda conn: _select_pauses(
                conn,
                "WHERE status = ? AND expires_at <= ? ORDER BY expires_at, seq LIMIT ?",
                (str(PauseStatus.OUTSTANDING), now, max(limit, 0)),
            )
        )

    async def unresumed(self) -> list[PauseRecord]:
        return await self._db.run(
            lambda conn: _select_pauses(
                conn,
                "WHERE status <> ? AND resumed_at IS NULL ORDER BY seq",
                (str(PauseStatus.OUTSTANDING),),
            )
        )

    async def _update(
        self, interrupt_id: str, column: Literal["message_ref", "resumed_at"], value: Any
    ) -> None:
        def update(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                changed = conn.execute(
                    f"UPDATE pauses SET {column} = ? WHERE interrupt_id = ?",  # noqa: S608 - a Literal column
                    (value, interrupt_id),
                )
                if changed.rowcount == 0:
                    raise KeyError(interrupt_id)

        await self._db.run(update)


class SqliteCheckpoints:
    """Turn state, versioned per run: the ids read ``run_id:version``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(self, run_id: str, state: dict[str, Any]) -> str:
        state_json = _dump(state)  # serialise before the hop: a bad state never takes the lock

        def save(conn: sqlite3.Connection) -> str:
            with transaction(conn):
                # Inside BEGIN IMMEDIATE, so no other writer can take the same version.
                (version,) = conn.execute(
                    "SELECT COALESCE(MAX(version), 0) + 1 FROM checkpoints WHERE run_id = ?",
                    (run_id,),
                ).fetchone()
                checkpoint_id = f"{run_id}:{version}"
                conn.execute(
                    "INSERT INTO checkpoints (checkpoint_id, run_id, version, state, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (checkpoint_id, run_id, version, state_json, time.time()),
                )
                return checkpoint_id

        return await self._db.run(save)

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        def load(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT state FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
            ).fetchone()
            return None if row is None else str(row["state"])

        state = await self._db.run(load)
        return None if state is None else dict(json.loads(state))


def _run_from_row(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        run_id=row["run_id"],
        scope=row["scope"],
        surface=row["surface"],
        requester=row["requester"],
        text=row["text"],
        created_at=row["created_at"],
        conversation=_load(row["conversation"]),
        status=RunStatus(row["status"]),
        updated_at=row["updated_at"],
        final_text=row["final_text"],
    )


class SqliteRuns:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, run: RunRecord) -> None:
        def create(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute(
                    _UPSERT_RUN,
                    (
                        run.run_id,
                        run.scope,
                        run.surface,
                        run.requester,
                        run.text,
                        run.created_at,
                        _dump(run.conversation),
                        str(run.status),
                        run.updated_at,
                        run.final_text,
                    ),
                )

        await self._db.run(create)

    async def get(self, run_id: str) -> RunRecord | None:
        def get(conn: sqlite3.Connection) -> RunRecord | None:
            row = conn.execute(f"{_SELECT_RUNS} WHERE run_id = ?", (run_id,)).fetchone()
            return None if row is None else _run_from_row(row)

        return await self._db.run(get)

    async def set_status(
        self, run_id: str, status: RunStatus, *, at: float, text: str = ""
    ) -> None:
        def set_status(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                # An empty text keeps the final text already recorded.
                changed = conn.execute(
                    "UPDATE runs SET status = ?, updated_at = ?,"
                    " final_text = CASE WHEN ? = '' THEN final_text ELSE ? END"
                    " WHERE run_id = ?",
                    (str(status), at, text, text, run_id),
                )
                if changed.rowcount == 0:
                    raise KeyError(run_id)

        await self._db.run(set_status)

    async def recent(self, *, limit: int = 50) -> list[RunRecord]:
        def recent(conn: sqlite3.Connection) -> list[RunRecord]:
            rows = conn.execute(
                # seq breaks ties in creation order, as the memory backend's stable sort does.
                f"{_SELECT_RUNS} ORDER BY created_at DESC, seq LIMIT ?",
                (max(limit, 0),),
            ).fetchall()
            return [_run_from_row(row) for row in rows]

        return await self._db.run(recent)


class SqliteAudit:
    """Append-only: there is no UPDATE or DELETE on the audit table anywhere."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(self, event: AuditEvent) -> None:
        def append(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute(
                    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        event.at,
                        event.kind,
                        event.run_id,
                        event.interrupt_id,
                        event.actor,
                        _dump(event.detail),
                    ),
                )

        await self._db.run(append)

    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]:
        def recent(conn: sqlite3.Connection) -> list[AuditEvent]:
            rows = conn.execute(
                "SELECT at, kind, run_id, interrupt_id, actor, detail FROM audit"
                " WHERE (? IS NULL OR run_id = ?) ORDER BY id DESC LIMIT ?",
                (run_id, run_id, max(limit, 0)),
            ).fetchall()
            return [
                AuditEvent(
                    at=row["at"],
                    kind=row["kind"],
                    run_id=row["run_id"],
                    interrupt_id=row["interrupt_id"],
                    actor=row["actor"],
                    detail=_load(row["detail"]),
                )
                for row in rows
            ]

        return await self._db.run(recent)


class SqliteStores:
    """All five ports over one SQLite file; open with ``await SqliteStores.open(path)``."""

    def __init__(self, db: Database) -> None:
        self._db = db
        # Typed as the ports: ``Stores`` declares plain (mutable, so invariant)
        # attributes, which the concrete classes would not match.
        self.consumption: Consumption = SqliteConsumption(db)
        self.ledger: Ledger = SqliteLedger(db)
        self.checkpoints: Checkpoints = SqliteCheckpoints(db)
        self.runs: Runs = SqliteRuns(db)
        self.audit: Audit = SqliteAudit(db)

    @classmethod
    async def open(cls, path: str | Path) -> SqliteStores:
        """Open (creating it and its folders if needed) and migrate the file at ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await Database.open(path)
        try:

            def prepare(conn: sqlite3.Connection) -> None:
                conn.row_factory = sqlite3.Row
                migrate(conn, str(path))

            await db.run(prepare)
        except BaseException:
            await db.close()
            raise
        return cls(db)

    async def ping(self) -> None:
        await self._db.run(lambda conn: conn.execute("SELECT 1").fetchone())

    async def close(self) -> None:
        await self._db.close()
