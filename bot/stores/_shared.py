"""The ports whose SQL is the same on both backends, written once over ``Statements``.

Runs, audit, leases, the journal, installations, checkpoint reads and the
reads of questions (the API's rows are in ``_api``, seen requests in
``_replays``). Each backend keeps only what differs: the unit of work, the
outbox claim, checkpoint saves, admin aggregates, migrations.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from bot.audit import chain_of
from bot.kernel.journal import Journal
from bot.questions.records import (
    AuditEvent,
    ConversationSummary,
    Question,
    RunRecord,
)
from bot.questions.write import UnitOfWork
from bot.stores import _rows
from bot.stores._api import SqlApiRecords
from bot.stores._audit_chain import SqlAuditChain
from bot.stores._rekey import SqlRekey
from bot.stores._replays import SqlReplays
from bot.stores._retention import SqlRetention
from bot.stores._rows import OUTSTANDING, RUNNING
from bot.stores._sql import CHECKPOINT_STATE, JOURNAL_STEPS, Statements
from bot.stores.ports import (
    AdminStore,
    ApiRecords,
    Audit,
    AuditChain,
    Checkpoints,
    DataRekey,
    Installations,
    Leases,
    Ledger,
    Outbox,
    Replays,
    Retention,
    Runs,
)

RUN_WRITE_COLUMNS = (*_rows.RUN_COLUMNS, "conversation_key")
INSERT_RUN = (
    f"INSERT INTO runs ({', '.join(RUN_WRITE_COLUMNS)})"  # noqa: S608 - our own identifiers
    f" VALUES ({', '.join('?' for _ in RUN_WRITE_COLUMNS)}) ON CONFLICT (run_id) DO NOTHING"
)
SELECT_RUNS = f"SELECT {', '.join(_rows.RUN_COLUMNS)} FROM runs"  # noqa: S608 - our own identifiers

# A command's idempotency key, in the transaction of its effect (both units);
# expired keys go first, so the table stays bounded and an expired key is free again.
PRUNE_ONCE_KEYS = "DELETE FROM once_keys WHERE expires_at <= ?"
INSERT_ONCE_KEY = (
    "INSERT INTO once_keys (key, at, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING"
)


def pauses_query(where: str, order: str, *, lock: str = "") -> str:
    """Questions matching ``where`` (alias ``p``), in ``order``, each with its attempts.

    One statement, so one snapshot: a question and its attempts always
    agree. The questions are chosen (and limited, by the last parameter)
    before the join, so the limit counts questions rather than attempts;
    ``lock`` (``FOR UPDATE ...``) locks the chosen questions only.
    """
    columns = ", ".join(f"p.{c}" for c in _rows.PAUSE_COLUMNS)
    return (
        f"SELECT {columns}, a.attempt_json FROM"  # noqa: S608 - our own identifiers
        f" (SELECT * FROM pauses AS p {where} ORDER BY {order} LIMIT ? {lock}) AS p"
        " LEFT JOIN cross_scope_attempts AS a ON a.interrupt_id = p.interrupt_id"
        f" ORDER BY {order}, a.seq"
    )


# Ties on last activity keep the order of each conversation's first run.
_CONVERSATIONS = """
WITH ranked AS (
    SELECT conversation_key, text, created_at, seq,
        {greatest}(updated_at, created_at) AS active,
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
# The key's JSON type too: conversation_key alone would also match a missing
# key ('') or a number.
# Also read inside a start's own write (``Write.history``).
RUNS_IN_CONVERSATION = (
    f"{SELECT_RUNS} WHERE surface = ? AND conversation_key = ? AND {{key_is_text}}"
    " ORDER BY created_at DESC, seq DESC LIMIT ?"
)


class SqlRuns:
    def __init__(self, db: Statements) -> None:
        self._db = db
        dialect = db.dialect
        self._conversations = _CONVERSATIONS.format(greatest=dialect.greatest)
        self._in_conversation = RUNS_IN_CONVERSATION.format(key_is_text=dialect.key_is_text)

    async def get(self, run_id: str) -> RunRecord | None:
        rows = await self._db.rows(f"{SELECT_RUNS} WHERE run_id = ?", run_id)
        return _rows.run_from_row(rows[0]) if rows else None

    async def recent(self, *, limit: int = 50) -> list[RunRecord]:
        # seq breaks ties in creation order.
        sql = f"{SELECT_RUNS} ORDER BY created_at DESC, seq LIMIT ?"
        return [_rows.run_from_row(row) for row in await self._db.rows(sql, max(limit, 0))]

    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        # Newest first so LIMIT keeps the latest, then turned oldest first.
        rows = await self._db.rows(self._in_conversation, surface, key, max(limit, 0))
        return [_rows.run_from_row(row) for row in rows][::-1]

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        # It reads every run of the surface, whatever the limit.
        rows = await self._db.many_rows(self._conversations, surface, max(limit, 0))
        return [
            ConversationSummary(
                row["conversation_key"], row["title"], row["last_active"], row["runs"]
            )
            for row in rows
        ]


_AUDIT_COLUMNS = "SELECT at, kind, run_id, interrupt_id, actor, detail FROM audit"
# Two texts rather than "? IS NULL OR chain = ?", which would keep the planner off the
# chain index and scan the whole table for a quiet run. A run's events are its chain's,
# newest first (migration 18 dropped the index by run: the chain's finds the same rows).
_RECENT_AUDIT = f"{_AUDIT_COLUMNS} ORDER BY id DESC LIMIT ?"
_RECENT_AUDIT_OF_RUN = f"{_AUDIT_COLUMNS} WHERE chain = ? ORDER BY seq DESC LIMIT ?"


class SqlAudit:
    """Append-only: there is no UPDATE or DELETE on the audit table anywhere."""

    def __init__(self, db: Statements) -> None:
        self._db = db

    async def append(self, event: AuditEvent) -> None:
        await self._db.write(self._db.audit_insert, *_rows.audit_params(event))

    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]:
        if run_id is None:
            rows = await self._db.rows(_RECENT_AUDIT, max(limit, 0))
        else:
            rows = await self._db.rows(_RECENT_AUDIT_OF_RUN, chain_of(run_id), max(limit, 0))
        return [_rows.audit_from_row(row) for row in rows]


# Taken over only when free, lapsed or already ours.
_ACQUIRE = (
    "UPDATE runs SET lease_owner = ?, lease_until = ? WHERE run_id = ? AND status = ?"
    " AND (lease_until IS NULL OR lease_until <= ? OR lease_owner = ?)"
)
# The caller's ``acquire`` settles the race; on PostgreSQL SKIP LOCKED leaves
# out the runs another replica is acquiring (or finishing) right now.
_LAPSED = (
    "SELECT run_id FROM runs WHERE status = ? AND (lease_until IS NULL OR lease_until <= ?)"
    " ORDER BY seq LIMIT ? {skip_locked}"
)


class SqlLeases:
    """Leases live on the runs' rows, so a run and its lease never disagree."""

    def __init__(self, db: Statements) -> None:
        self._db = db
        self._lapsed = _LAPSED.format(skip_locked=db.dialect.skip_locked)

    async def acquire(self, run_id: str, owner: str, *, now: float, until: float) -> bool:
        params = (owner, until, run_id, RUNNING, now, owner)
        return bool(await self._db.write(_ACQUIRE, *params))

    async def renew(self, run_id: str, owner: str, *, until: float) -> bool:
        sql = "UPDATE runs SET lease_until = ? WHERE run_id = ? AND lease_owner = ?"
        return bool(await self._db.write(sql, until, run_id, owner))

    async def release(self, run_id: str, owner: str) -> None:
        sql = (
            "UPDATE runs SET lease_owner = '', lease_until = NULL"
            " WHERE run_id = ? AND lease_owner = ?"
        )
        await self._db.write(sql, run_id, owner)

    async def lapsed(self, now: float, *, limit: int = 100) -> list[str]:
        rows = await self._db.rows(self._lapsed, RUNNING, now, max(limit, 0))
        return [row["run_id"] for row in rows]


class SqlJournal:
    """Finished steps; the primary key makes the first record of a step the only one."""

    def __init__(self, db: Statements) -> None:
        self._db = db

    async def steps(self, run_id: str) -> dict[str, Any]:
        rows = await self._db.rows(JOURNAL_STEPS, run_id)
        return {row["step"]: _rows.journal_value(row["step"], row["value"]) for row in rows}

    async def record(self, run_id: str, step: str, value: Any) -> None:
        text = _rows.journal_text(step, value)  # a bad value never takes the lock
        sql = (
            "INSERT INTO journal (run_id, step, value, at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (run_id, step) DO NOTHING"
        )
        await self._db.write(sql, run_id, step, text, time.time())


class SqlInstallations:
    """One row per (platform, key), opaque text: the adapter encrypts before it saves."""

    def __init__(self, db: Statements) -> None:
        self._db = db

    async def save(self, platform: str, key: str, blob: str) -> None:
        sql = (
            "INSERT INTO installations (platform, key, blob, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (platform, key) DO UPDATE SET blob = excluded.blob,"
            " updated_at = excluded.updated_at"
        )
        await self._db.write(sql, platform, key, blob, time.time())

    async def find(self, platform: str, key: str) -> str | None:
        sql = "SELECT blob FROM installations WHERE platform = ? AND key = ?"
        rows = await self._db.rows(sql, platform, key)
        return str(rows[0]["blob"]) if rows else None

    async def delete(self, platform: str, key: str) -> None:
        await self._db.write(
            "DELETE FROM installations WHERE platform = ? AND key = ?", platform, key
        )


class SqlCheckpointReads:
    """Loading and discarding turn state; saving is the backend's (it numbers versions)."""

    db: Statements

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        rows = await self.db.rows(CHECKPOINT_STATE, checkpoint_id)
        return _rows.state_of(checkpoint_id, rows[0]["state"]) if rows else None

    async def discard(self, checkpoint_id: str) -> None:
        await self.db.write("DELETE FROM checkpoints WHERE checkpoint_id = ?", checkpoint_id)


# A cross-scope attempt (``Attempted``), in the unit of work's transaction, in this
# order: counting first locks the question's row, so concurrent attempts queue there;
# then the attempt, then all but the latest few are dropped.
COUNT_ATTEMPT = "UPDATE pauses SET cross_scope_count = cross_scope_count + 1 WHERE interrupt_id = ?"
INSERT_ATTEMPT = (
    "INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at) VALUES (?, ?, ?)"
)
TRIM_ATTEMPTS = (
    "DELETE FROM cross_scope_attempts WHERE interrupt_id = ? AND seq NOT IN"
    " (SELECT seq FROM cross_scope_attempts WHERE interrupt_id = ? ORDER BY seq DESC LIMIT ?)"
)


class SqlLedger:
    """Issued questions as stored; cross-scope attempts live in their own table, in order."""

    def __init__(self, db: Statements, unit: UnitOfWork) -> None:
        self._db = db
        self._unit = unit
        dialect = db.dialect
        self._no_limit = dialect.no_limit
        self._outstanding = pauses_query(
            "WHERE p.status = ? AND (CAST(? AS TEXT) IS NULL OR p.scope = ?)", "p.seq"
        )
        # The index (status, nudge_due_at) holds them in this order: the read stops at limit.
        self._nudges_due = pauses_query(
            "WHERE p.status = ? AND p.nudge_due_at <= ?", "p.nudge_due_at, p.seq"
        )
        # SKIP LOCKED: a question another replica is closing right now is left to it.
        self._overdue = pauses_query(
            "WHERE p.status = ? AND p.expires_at <= ?",
            "p.expires_at, p.seq",
            lock=dialect.skip_locked,
        )
        self._of_runs = pauses_query(f"WHERE p.run_id {dialect.in_list}", "p.issued_at, p.seq")
        self._dialect = dialect

    async def get(self, interrupt_id: str) -> Question | None:
        return await self._unit.question(interrupt_id)

    async def outstanding(self, *, scope: str | None = None) -> list[Question]:
        # The list grows with the table, not with a limit.
        rows = await self._db.many_rows(
            self._outstanding, OUTSTANDING, scope, scope, self._no_limit
        )
        return _rows.pauses_from_rows(rows)

    async def nudges_due(self, now: float, *, limit: int = 100) -> list[Question]:
        return _rows.pauses_from_rows(
            await self._db.rows(self._nudges_due, OUTSTANDING, now, max(limit, 0))
        )

    async def overdue(self, now: float, *, limit: int = 100) -> list[Question]:
        return _rows.pauses_from_rows(
            await self._db.rows(self._overdue, OUTSTANDING, now, max(limit, 0))
        )

    async def for_runs(self, run_ids: Sequence[str]) -> list[Question]:
        ids = self._dialect.list_value(run_ids)
        return _rows.pauses_from_rows(await self._db.rows(self._of_runs, ids, self._no_limit))


class SqlPorts:
    """Every port of one SQL backend: the shared ones, and the four a backend brings."""

    def __init__(
        self,
        db: Statements,
        unit: UnitOfWork,
        checkpoints: Checkpoints,
        outbox: Outbox,
        admin: AdminStore,
    ) -> None:
        # Typed as the ports, which is what ``Stores`` declares.
        self.unit: UnitOfWork = unit
        self.checkpoints: Checkpoints = checkpoints
        self.outbox: Outbox = outbox
        self.admin: AdminStore = admin
        self.ledger: Ledger = SqlLedger(db, unit)
        self.runs: Runs = SqlRuns(db)
        self.audit: Audit = SqlAudit(db)
        self.audit_chain: AuditChain = SqlAuditChain(db)
        self.retention: Retention = SqlRetention(db)
        self.rekey: DataRekey = SqlRekey(db)
        self.leases: Leases = SqlLeases(db)
        self.journal: Journal = SqlJournal(db)
        self.installations: Installations = SqlInstallations(db)
        self.api: ApiRecords = SqlApiRecords(db)
        self.replays: Replays = SqlReplays(db)
