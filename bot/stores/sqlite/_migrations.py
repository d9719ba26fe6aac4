"""Versioned schema migrations, applied when a store opens.

Each migration runs in its own BEGIN IMMEDIATE transaction and re-reads the
current version inside it, so processes opening the same file at once apply
each migration exactly once: the second waits for the first's lock, then
sees the version already reached and does nothing.

The SQL sticks to types and syntax PostgreSQL also accepts (TEXT, REAL,
INTEGER, JSON kept as TEXT) so a PostgreSQL backend can reuse it with only
the identity columns and REAL -> DOUBLE PRECISION to translate. Statements
are kept one per string rather than as one script because
``sqlite3.Connection.executescript`` commits any open transaction first.
"""

from __future__ import annotations

import sqlite3
import time
from typing import NamedTuple

from bot.audit import BRIDGE_CHAIN, Linker
from bot.stores._audit_chain import carried
from bot.stores._migration_texts import (
    AGENTS_API,
    AUDIT_CARRY,
    AUDIT_CHAINS,
    KEY_RATES,
    MULTI_ROUTE,
    NUDGE_CARRY,
    NUDGE_DUE,
    NUDGE_DUE_ONLY,
    POLICIES,
    TRACES,
)
from bot.stores._rows import carried_nudges
from bot.stores.errors import StoreError
from bot.stores.sqlite._db import transaction


class Migration(NamedTuple):
    version: int
    description: str
    sql: tuple[str, ...]


# bot.questions.records.answer_bucket in SQL, for the time-to-answer histogram.
_TOOK = "MAX(COALESCE(ROW.closed_at, ROW.issued_at) - ROW.issued_at, 0)"
_BUCKET = (
    "(CASE WHEN <took> < 3600 THEN CAST(<took> AS INTEGER)"
    " WHEN <took> < 86400 THEN CAST(<took> / 60 AS INTEGER) * 60"
    " ELSE CAST(<took> / 3600 AS INTEGER) * 3600 END)"
).replace("<took>", _TOOK)


def _bucketed(statement: str) -> str:
    """``statement`` with BUCKET(NEW) etc. spelled out; our own text only."""
    for row in ("pauses", "NEW", "OLD"):
        statement = statement.replace(f"BUCKET({row})", _BUCKET.replace("ROW", row))
    return statement


# Kept as constants because version 7 rebuilds their tables with the same text.
# A question answered (asked answered, or answered later) adds one to its bucket.
_COUNT_ANSWER = """
                INSERT OR IGNORE INTO answer_times (bucket, n)
                VALUES (BUCKET(NEW), 0);
                UPDATE answer_times SET n = n + 1 WHERE bucket = BUCKET(NEW);
            """
_REFUSAL_COUNTS_TRIGGER = """CREATE TRIGGER refusal_counts_insert AFTER INSERT ON audit
            WHEN NEW.kind = 'refused' BEGIN
                INSERT OR IGNORE INTO refusal_counts (reason, n)
                VALUES (COALESCE(json_extract(NEW.detail, '$.reason'), ''), 0);
                UPDATE refusal_counts SET n = n + 1
                WHERE reason = COALESCE(json_extract(NEW.detail, '$.reason'), '');
            END"""
_OUTBOX_COLUMNS = """
                run_id TEXT NOT NULL,
                surface TEXT NOT NULL,
                kind TEXT NOT NULL,
                interrupt_id TEXT NOT NULL,
                body TEXT NOT NULL,
                created_at REAL NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                next_at REAL NOT NULL,
                claimed_until REAL NOT NULL,
                claimed_by TEXT NOT NULL,
                last_error TEXT NOT NULL,
                done_at REAL"""
_AUDIT_COLUMNS = """
                at REAL NOT NULL,
                kind TEXT NOT NULL,
                run_id TEXT NOT NULL,
                interrupt_id TEXT NOT NULL,
                actor TEXT NOT NULL,
                detail TEXT NOT NULL"""


# Version 13: questions belong to a key's id, not its name. Each stored key gets a
# random id; each question its key's, found by the name it carries. A name no stored
# key has was a BOT_API_KEYS entry's (or a revoked key's): migrations cannot read the
# settings, so it is ``name:<name>`` until that entry claims it at start
# (``bot.api._keys.settle_keys``). SQLite drops a table's UNIQUE only by rebuilding it.
_API_QUESTION_COLUMNS = (
    "interrupt_id, key_name, idempotency_key, body_hash, kind, created_at, callback_url,"
    " metadata, run_ref"
)
_KEY_IDS = (
    "ALTER TABLE api_keys ADD COLUMN key_id TEXT NOT NULL DEFAULT ''",
    "UPDATE api_keys SET key_id = 'key_' || lower(hex(randomblob(12)))",
    "CREATE UNIQUE INDEX api_keys_id ON api_keys (key_id)",
    """CREATE TABLE api_questions_new (
                interrupt_id TEXT PRIMARY KEY,
                key_name TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                body_hash TEXT NOT NULL,
                kind TEXT NOT NULL,
                created_at REAL NOT NULL,
                callback_url TEXT,
                metadata TEXT,
                run_ref TEXT,
                key_id TEXT NOT NULL,
                UNIQUE (key_id, idempotency_key)
            )""",
    f"INSERT INTO api_questions_new ({_API_QUESTION_COLUMNS}, key_id)"  # noqa: S608 - our own text
    f" SELECT {_API_QUESTION_COLUMNS}, COALESCE((SELECT k.key_id FROM api_keys AS k"
    " WHERE k.name = api_questions.key_name), 'name:' || key_name) FROM api_questions",
    "DROP TABLE api_questions",
    "ALTER TABLE api_questions_new RENAME TO api_questions",
    "CREATE INDEX api_questions_newest ON api_questions (key_id, created_at, interrupt_id)",
)


# Each new event joins its chain (its run's, or the bridge's): the head moves, and the row
# gets its number and hash from it. The SQL functions are ``bot.audit``'s (``_db``).
_CHAIN = f"CASE NEW.run_id WHEN '' THEN '{BRIDGE_CHAIN}' ELSE NEW.run_id END"
_AUDIT_LINK_TRIGGER = f"""CREATE TRIGGER audit_link AFTER INSERT ON audit BEGIN
                INSERT INTO audit_heads (chain, seq, hash)
                VALUES ({_CHAIN}, 1, audit_link(audit_genesis({_CHAIN}), NEW.digest))
                ON CONFLICT (chain) DO UPDATE
                SET seq = seq + 1, hash = audit_link(hash, NEW.digest);
                UPDATE audit SET (chain, seq, hash) = (SELECT chain, seq, hash FROM audit_heads
                WHERE chain = {_CHAIN}) WHERE id = NEW.id;
            END"""  # noqa: S608 - our own text


# Version 17: fewer pages per audited commit. The trigger links an event after its insert
# (SQLite's triggers cannot set NEW), so the row first enters the chain index as
# (NULL, NULL), at the index's start, and moves to its chain's place a statement later:
# two leaf pages for one entry. The index holds linked rows only, so the insert leaves it
# alone (the verifier's reads name a chain, or ``chain IS NOT NULL``, so they use it).
# The heads become one B-tree keyed by chain (WITHOUT ROWID): keyed by a rowid, a new
# chain's head wrote the table's page and its primary key's. Rows and heads carried as
# they are; the trigger names the heads' table, so it is dropped across the rebuild.
_AUDIT_PAGES = (
    "DROP INDEX audit_chain",
    "CREATE UNIQUE INDEX audit_chain ON audit (chain, seq) WHERE chain IS NOT NULL",
    "DROP TRIGGER audit_link",
    """CREATE TABLE audit_heads_new (
                chain TEXT PRIMARY KEY,
                seq INTEGER NOT NULL,
                hash TEXT NOT NULL,
                signed INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID""",
    "INSERT INTO audit_heads_new (chain, seq, hash, signed)"
    " SELECT chain, seq, hash, signed FROM audit_heads",
    "DROP TABLE audit_heads",
    "ALTER TABLE audit_heads_new RENAME TO audit_heads",
    _AUDIT_LINK_TRIGGER,
    *NUDGE_DUE_ONLY,
)


# Version 18: the insert links each event (``bot.stores._audit_chain``), not a trigger
# after it: the row is written once, the heads are brought up to date when read, from the
# rows past ``through`` (the heads the trigger kept are current up to the newest row).
# The chain index finds a run's events, so the index by run goes.
_LINKING_INSERTS = (
    "DROP TRIGGER audit_link",
    "DROP INDEX audit_run",
    "CREATE TABLE audit_heads_refreshed (through INTEGER NOT NULL)",
    "INSERT INTO audit_heads_refreshed (through) SELECT COALESCE(MAX(id), 0) FROM audit",
)


def _carry_audit(conn: sqlite3.Connection) -> None:
    """Link the rows written before migration 15, oldest first, into their chains."""
    linker, after = Linker(), 0
    while rows := conn.execute(AUDIT_CARRY, (after,)).fetchall():
        conn.executemany(
            "UPDATE audit SET digest = ?, chain = ?, seq = ?, hash = ? WHERE id = ?",
            carried(rows, linker),
        )
        after = rows[-1][0]
    conn.executemany(
        "INSERT INTO audit_heads (chain, seq, hash) VALUES (?, ?, ?)",
        [(chain, seq, hashed) for chain, (seq, hashed) in linker.heads.items()],
    )


def _carry_nudges(conn: sqlite3.Connection) -> None:
    """When each question open before migration 16 owes its next reminder or step."""
    rows = conn.execute(NUDGE_CARRY).fetchall()
    conn.executemany(
        "UPDATE pauses SET nudge_due_at = ? WHERE interrupt_id = ?", carried_nudges(rows)
    )


# Rows a migration carries in Python, after its statements, in its transaction.
_CARRIES = {15: _carry_audit, 16: _carry_nudges}


def _without_autoincrement(table: str, columns: str) -> str:
    """``table``'s columns under a plain rowid ``id``, as ``<table>_new``; our own text only."""
    return f"CREATE TABLE {table}_new (id INTEGER PRIMARY KEY,{columns})"


# Append only: never edit a migration that has shipped; add the next version.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "runs, pauses, cross-scope attempts, spends, checkpoints, audit",
        (
            # seq keeps creation order, which listings return.
            """CREATE TABLE runs (
                seq INTEGER PRIMARY KEY,
                run_id TEXT NOT NULL UNIQUE,
                scope TEXT NOT NULL,
                surface TEXT NOT NULL,
                requester TEXT NOT NULL,
                text TEXT NOT NULL,
                created_at REAL NOT NULL,
                conversation TEXT NOT NULL,
                status TEXT NOT NULL,
                updated_at REAL NOT NULL,
                final_text TEXT NOT NULL
            )""",
            """CREATE TABLE pauses (
                seq INTEGER PRIMARY KEY,
                interrupt_id TEXT NOT NULL UNIQUE,
                run_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                name TEXT NOT NULL,
                tool_call_id TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                payload TEXT NOT NULL,
                issued_at REAL NOT NULL,
                expires_at REAL NOT NULL,
                root_run_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                status TEXT NOT NULL,
                answer TEXT,
                closed_by TEXT NOT NULL,
                closed_at REAL,
                resumed_at REAL,
                message_ref TEXT
            )""",
            "CREATE INDEX pauses_status_expires ON pauses (status, expires_at)",
            "CREATE INDEX pauses_run ON pauses (run_id)",
            """CREATE TABLE cross_scope_attempts (
                seq INTEGER PRIMARY KEY,
                interrupt_id TEXT NOT NULL
                    REFERENCES pauses (interrupt_id) ON DELETE CASCADE,
                attempt_json TEXT NOT NULL,
                at REAL NOT NULL
            )""",
            "CREATE INDEX cross_scope_attempts_pause ON cross_scope_attempts (interrupt_id)",
            # No foreign key to pauses: spend must answer False for an unknown
            # id, not fail, and a spent id stays spent even if re-issued.
            """CREATE TABLE spends (
                interrupt_id TEXT PRIMARY KEY,
                by TEXT NOT NULL,
                at REAL NOT NULL,
                status TEXT NOT NULL
            )""",
            """CREATE TABLE checkpoints (
                checkpoint_id TEXT PRIMARY KEY,
                run_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                state TEXT NOT NULL,
                created_at REAL NOT NULL,
                UNIQUE (run_id, version)
            )""",
            f"""CREATE TABLE audit (
                id INTEGER PRIMARY KEY AUTOINCREMENT,{_AUDIT_COLUMNS}
            )""",
            "CREATE INDEX audit_run ON audit (run_id)",
        ),
    ),
    Migration(
        2,
        "runs.conversation_key, to list a conversation's runs without reading JSON",
        (
            "ALTER TABLE runs ADD COLUMN conversation_key TEXT NOT NULL DEFAULT ''",
            # For the string keys Conversation.to_json writes, this is what
            # SqliteRuns.create now stores itself. (PostgreSQL would spell
            # the JSON read conversation::jsonb ->> 'key'.)
            "UPDATE runs SET conversation_key = COALESCE(json_extract(conversation, '$.key'), '')",
            # created_at last (and seq, the rowid, implied after it): a
            # conversation's runs come out of the index already in order.
            "CREATE INDEX runs_conversation ON runs (surface, conversation_key, created_at)",
        ),
    ),
    Migration(
        3,
        "pauses.resume_claimed_until: one process at a time resumes a closed pause",
        ("ALTER TABLE pauses ADD COLUMN resume_claimed_until REAL",),
    ),
    Migration(
        4,
        "durable runs: leases, journal, outbox; bounded cross-scope attempts; closer ids",
        (
            # Version 3's per-pause claim is superseded by the run's lease.
            "ALTER TABLE runs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE runs ADD COLUMN lease_until REAL",
            "ALTER TABLE runs ADD COLUMN delivery_error TEXT NOT NULL DEFAULT ''",
            # Recovery asks for RUNNING runs whose lease lapsed.
            "CREATE INDEX runs_status_lease ON runs (status, lease_until)",
            "ALTER TABLE pauses ADD COLUMN closed_by_id TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE pauses ADD COLUMN cross_scope_count INTEGER NOT NULL DEFAULT 0",
            """UPDATE pauses SET cross_scope_count = (
                SELECT COUNT(*) FROM cross_scope_attempts AS a
                WHERE a.interrupt_id = pauses.interrupt_id)""",
            # One pause per reserved call: a replay can never ask the same call twice.
            "CREATE UNIQUE INDEX pauses_run_call ON pauses (run_id, tool_call_id)",
            """CREATE TABLE journal (
                run_id TEXT NOT NULL,
                step TEXT NOT NULL,
                value TEXT NOT NULL,
                at REAL NOT NULL,
                PRIMARY KEY (run_id, step)
            )""",
            f"""CREATE TABLE outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT,{_OUTBOX_COLUMNS}
            )""",
            # The claim reads pending rows by due time, and checks each run's oldest.
            "CREATE INDEX outbox_due ON outbox (state, next_at)",
            "CREATE INDEX outbox_run ON outbox (run_id, state, id)",
        ),
    ),
    Migration(
        5,
        "installations: platform installations (Slack OAuth), encrypted by the adapter",
        (
            "CREATE TABLE installations (platform TEXT NOT NULL, key TEXT NOT NULL,"
            " blob TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (platform, key))",
        ),
    ),
    Migration(
        6,
        "admin commands: indexes for pending (keyset by issue order), counters for stats",
        (
            # Partial indexes hold the outstanding rows only, so ``pending``
            # reads a page of them however many closed rows there are; the
            # queries spell status = 'outstanding' literally so the planner
            # can prove the index applies.
            "CREATE INDEX pauses_open ON pauses (seq) WHERE status = 'outstanding'",
            "CREATE INDEX pauses_open_scope ON pauses (scope, seq) WHERE status = 'outstanding'",
            "CREATE INDEX pauses_open_name ON pauses (name, seq) WHERE status = 'outstanding'",
            # ``pending user=...``: the requester is on the run.
            "CREATE INDEX runs_requester ON runs (requester)",
            # Counting a million rows by status walks a million index entries
            # (~70 ms); counters kept by triggers, in the writing transaction
            # whoever writes (any process, the shell), make it four reads.
            "CREATE TABLE pause_counts (status TEXT PRIMARY KEY, n INTEGER NOT NULL)",
            "INSERT INTO pause_counts (status, n) VALUES ('outstanding', 0), ('answered', 0),"
            " ('expired', 0), ('cancelled', 0)",
            """UPDATE pause_counts SET n = (
                SELECT COUNT(*) FROM pauses WHERE pauses.status = pause_counts.status)""",
            """CREATE TRIGGER pause_counts_insert AFTER INSERT ON pauses BEGIN
                UPDATE pause_counts SET n = n + 1 WHERE status = NEW.status;
            END""",
            """CREATE TRIGGER pause_counts_update AFTER UPDATE OF status ON pauses
            WHEN OLD.status <> NEW.status BEGIN
                UPDATE pause_counts SET n = n - 1 WHERE status = OLD.status;
                UPDATE pause_counts SET n = n + 1 WHERE status = NEW.status;
            END""",
            """CREATE TRIGGER pause_counts_delete AFTER DELETE ON pauses BEGIN
                UPDATE pause_counts SET n = n - 1 WHERE status = OLD.status;
            END""",
            # Time to answer as a histogram (records.answer_bucket: exact to the
            # second under an hour, the minute under a day, then the hour), so
            # a percentile is a walk over a few thousand buckets, not a million rows.
            "CREATE TABLE answer_times (bucket REAL PRIMARY KEY, n INTEGER NOT NULL)",
            _bucketed("""INSERT INTO answer_times (bucket, n)
            SELECT BUCKET(pauses), COUNT(*) FROM pauses
            WHERE status = 'answered' GROUP BY 1"""),
            _bucketed(f"""CREATE TRIGGER answer_times_insert AFTER INSERT ON pauses
            WHEN NEW.status = 'answered' BEGIN{_COUNT_ANSWER}END"""),
            _bucketed(f"""CREATE TRIGGER answer_times_answered AFTER UPDATE OF status ON pauses
            WHEN NEW.status = 'answered' AND OLD.status <> 'answered' BEGIN{_COUNT_ANSWER}END"""),
            _bucketed("""CREATE TRIGGER answer_times_unanswered AFTER UPDATE OF status ON pauses
            WHEN OLD.status = 'answered' AND NEW.status <> 'answered' BEGIN
                UPDATE answer_times SET n = n - 1 WHERE bucket = BUCKET(OLD);
            END"""),
            _bucketed("""CREATE TRIGGER answer_times_delete AFTER DELETE ON pauses
            WHEN OLD.status = 'answered' BEGIN
                UPDATE answer_times SET n = n - 1 WHERE bucket = BUCKET(OLD);
            END"""),
            # Refusals by reason, likewise; the audit table is append-only.
            "CREATE TABLE refusal_counts (reason TEXT PRIMARY KEY, n INTEGER NOT NULL)",
            """INSERT INTO refusal_counts (reason, n)
            SELECT COALESCE(json_extract(detail, '$.reason'), ''), COUNT(*) FROM audit
            WHERE kind = 'refused' GROUP BY 1""",
            _REFUSAL_COUNTS_TRIGGER,
        ),
    ),
    Migration(
        7,
        "leaner writes: no duplicate pauses index; SQLite: no spends rows, no AUTOINCREMENT",
        (
            # The ledger row's status decides a spend (UPDATE ... WHERE status =
            # 'outstanding' under the write lock); the spends rows only repeated it.
            "DROP TABLE spends",
            # pauses_run_call (run_id, tool_call_id) serves every run_id lookup.
            "DROP INDEX pauses_run",
            # AUTOINCREMENT writes sqlite_sequence in every insert. Rows of these
            # tables are never deleted, so a plain rowid counts up the same way.
            _without_autoincrement("outbox", _OUTBOX_COLUMNS),
            "INSERT INTO outbox_new SELECT * FROM outbox",
            "DROP TABLE outbox",
            "ALTER TABLE outbox_new RENAME TO outbox",
            "CREATE INDEX outbox_due ON outbox (state, next_at)",
            "CREATE INDEX outbox_run ON outbox (run_id, state, id)",
            _without_autoincrement("audit", _AUDIT_COLUMNS),
            "INSERT INTO audit_new SELECT * FROM audit",
            "DROP TABLE audit",
            "ALTER TABLE audit_new RENAME TO audit",
            "CREATE INDEX audit_run ON audit (run_id)",
            _REFUSAL_COUNTS_TRIGGER,
        ),
    ),
    Migration(8, "the agents API: answerers per question, API questions, API keys", AGENTS_API),
    Migration(
        9,
        "replays: signed requests seen and how each was answered; commands' idempotency keys",
        (
            # A request's key (its signature) until its window has passed; status,
            # body and content type once the first was answered.
            """CREATE TABLE seen_requests (
                key TEXT PRIMARY KEY,
                expires_at REAL NOT NULL,
                status INTEGER,
                body BLOB,
                content_type TEXT
            )""",
            "CREATE INDEX seen_requests_expiry ON seen_requests (expires_at)",
            # Written in the transaction of the command's effect (``Write.once_key``).
            """CREATE TABLE once_keys (
                key TEXT PRIMARY KEY,
                at REAL NOT NULL,
                expires_at REAL NOT NULL
            )""",
            "CREATE INDEX once_keys_expiry ON once_keys (expires_at)",
        ),
    ),
    Migration(10, "approval policies: policy, tally and level per question; votes", POLICIES),
    Migration(11, "one question on several routes: its further posts", MULTI_ROUTE),
    Migration(12, "API keys: questions each may create a minute", KEY_RATES),
    Migration(13, "API keys: an id per key, and each question belongs to its key's id", _KEY_IDS),
    Migration(14, "traces: the traceparent each question was asked under", TRACES),
    Migration(
        15,
        "the tamper-evident audit: events linked into a hash chain per run, signed "
        "checkpoints; when a question's content was purged",
        (*AUDIT_CHAINS, _AUDIT_LINK_TRIGGER),
    ),
    Migration(16, "reminders and escalation: when each question's next one is due", NUDGE_DUE),
    Migration(
        17,
        "fewer pages a write: the audit's chain index holds linked rows only, its heads"
        " one B-tree; the nudges' index only the questions that owe one",
        _AUDIT_PAGES,
    ),
    Migration(
        18,
        "fewer pages a write: each audit event linked by its own insert, the heads brought"
        " up to date when read; a run's events found by their chain",
        _LINKING_INSERTS,
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version

_CREATE_TRACKING = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at REAL NOT NULL
)"""


def _current_version(conn: sqlite3.Connection, path: str) -> int:
    (version,) = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    if version > LATEST_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this bot knows "
            f"({LATEST_VERSION}); upgrade the bot to a release that knows it"
        )
    return int(version)


def migrate(
    conn: sqlite3.Connection, path: str = "the database", *, target: int = LATEST_VERSION
) -> int:
    """Bring the schema up to ``target`` (tests stop early); returns the version reached."""
    with transaction(conn):
        conn.execute(_CREATE_TRACKING)
        _current_version(conn, path)
    for migration in MIGRATIONS:
        if migration.version > target:
            break
        with transaction(conn):
            # Re-read under the write lock: another process may have applied it.
            if _current_version(conn, path) >= migration.version:
                continue
            for statement in migration.sql:
                conn.execute(statement)
            carry = _CARRIES.get(migration.version)
            if carry is not None:
                carry(conn)
            conn.execute(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.description, time.time()),
            )
    return _current_version(conn, path)
