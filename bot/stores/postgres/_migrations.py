"""The SQLite migrations' versions and meanings, spelled for PostgreSQL.

Version N here is version N in ``bot.stores.sqlite._migrations``: the same tables,
columns and indexes, with REAL as DOUBLE PRECISION, INTEGER PRIMARY KEY as
BIGSERIAL and ``by`` quoted (a reserved word here). JSON stays TEXT, as in
SQLite: JSONB would reorder a question's keys (its form fields) and nothing
queries inside the JSON except migration 2's one-off backfill.

Replicas starting together serialise on a session advisory lock (one per
schema), and each migration runs in its own transaction that re-reads the
version, so each is applied exactly once. PostgreSQL's DDL is
transactional, so a migration that fails leaves nothing half done.
"""

from __future__ import annotations

import time

from bot.stores._migration_texts import AGENTS_API, POLICIES
from bot.stores.errors import StoreError
from bot.stores.postgres._db import Conn
from bot.stores.sqlite._migrations import MIGRATIONS as SQLITE_MIGRATIONS
from bot.stores.sqlite._migrations import Migration

# Migration 6's counters: a close updates one of 16 rows per status (shards
# 0-15), so replicas closing questions at once rarely wait on the same row.
_BUCKET = (
    "CASE WHEN took < 3600 THEN floor(took) WHEN took < 86400 THEN floor(took / 60) * 60"
    " ELSE floor(took / 3600) * 3600 END"
)
_ADMIN: tuple[str, ...] = (
    "CREATE INDEX pauses_open ON pauses (seq) WHERE status = 'outstanding'",
    "CREATE INDEX pauses_open_scope ON pauses (scope, seq) WHERE status = 'outstanding'",
    "CREATE INDEX pauses_open_name ON pauses (name, seq) WHERE status = 'outstanding'",
    "CREATE INDEX runs_requester ON runs (requester)",
    "CREATE TABLE pause_counts (status TEXT NOT NULL, shard INTEGER NOT NULL,"
    " n BIGINT NOT NULL, PRIMARY KEY (status, shard))",
    "INSERT INTO pause_counts (status, shard, n) SELECT s, g, 0 FROM"
    " unnest(ARRAY['outstanding', 'answered', 'expired', 'cancelled']) AS s,"
    " generate_series(0, 15) AS g",
    "UPDATE pause_counts SET n = c.n FROM (SELECT status, COUNT(*) AS n FROM pauses"
    " GROUP BY status) AS c WHERE pause_counts.status = c.status AND pause_counts.shard = 0",
    "CREATE TABLE answer_times (bucket DOUBLE PRECISION PRIMARY KEY, n BIGINT NOT NULL)",
    f"CREATE FUNCTION answer_bucket(took DOUBLE PRECISION) RETURNS DOUBLE PRECISION"
    f" LANGUAGE SQL IMMUTABLE AS $$ SELECT {_BUCKET} $$",
    "INSERT INTO answer_times (bucket, n) SELECT answer_bucket(GREATEST(COALESCE(closed_at,"
    " issued_at) - issued_at, 0)), COUNT(*) FROM pauses WHERE status = 'answered' GROUP BY 1",
    "CREATE TABLE refusal_counts (reason TEXT PRIMARY KEY, n BIGINT NOT NULL)",
    "INSERT INTO refusal_counts (reason, n) SELECT COALESCE(detail::jsonb ->> 'reason', ''),"
    " COUNT(*) FROM audit WHERE kind = 'refused' GROUP BY 1",
    """CREATE FUNCTION count_pauses() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        s INTEGER := floor(random() * 16);
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND (TG_OP = 'DELETE' OR OLD.status <> NEW.status) THEN
            UPDATE pause_counts SET n = n - 1 WHERE status = OLD.status AND shard = s;
            IF OLD.status = 'answered' THEN
                UPDATE answer_times SET n = n - 1 WHERE bucket = answer_bucket(
                    GREATEST(COALESCE(OLD.closed_at, OLD.issued_at) - OLD.issued_at, 0));
            END IF;
        END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.status <> NEW.status) THEN
            UPDATE pause_counts SET n = n + 1 WHERE status = NEW.status AND shard = s;
            IF NEW.status = 'answered' THEN
                INSERT INTO answer_times (bucket, n) VALUES (answer_bucket(
                    GREATEST(COALESCE(NEW.closed_at, NEW.issued_at) - NEW.issued_at, 0)), 1)
                ON CONFLICT (bucket) DO UPDATE SET n = answer_times.n + 1;
            END IF;
        END IF;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER count_pauses AFTER INSERT OR UPDATE OF status OR DELETE ON pauses"
    " FOR EACH ROW EXECUTE FUNCTION count_pauses()",
    """CREATE FUNCTION count_refusals() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO refusal_counts (reason, n)
        VALUES (COALESCE(NEW.detail::jsonb ->> 'reason', ''), 1)
        ON CONFLICT (reason) DO UPDATE SET n = refusal_counts.n + 1;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER count_refusals AFTER INSERT ON audit FOR EACH ROW"
    " WHEN (NEW.kind = 'refused') EXECUTE FUNCTION count_refusals()",
)

# Append only, in step with ``bot.stores.sqlite._migrations``: never edit one that shipped.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        SQLITE_MIGRATIONS[0].description,
        (
            """CREATE TABLE runs (
                seq BIGSERIAL PRIMARY KEY,
                run_id TEXT NOT NULL UNIQUE,
                scope TEXT NOT NULL,
                surface TEXT NOT NULL,
                requester TEXT NOT NULL,
                text TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                conversation TEXT NOT NULL,
                status TEXT NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                final_text TEXT NOT NULL
            )""",
            """CREATE TABLE pauses (
                seq BIGSERIAL PRIMARY KEY,
                interrupt_id TEXT NOT NULL UNIQUE,
                run_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                name TEXT NOT NULL,
                tool_call_id TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                payload TEXT NOT NULL,
                issued_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                root_run_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                status TEXT NOT NULL,
                answer TEXT,
                closed_by TEXT NOT NULL,
                closed_at DOUBLE PRECISION,
                resumed_at DOUBLE PRECISION,
                message_ref TEXT
            )""",
            "CREATE INDEX pauses_status_expires ON pauses (status, expires_at)",
            "CREATE INDEX pauses_run ON pauses (run_id)",
            """CREATE TABLE cross_scope_attempts (
                seq BIGSERIAL PRIMARY KEY,
                interrupt_id TEXT NOT NULL
                    REFERENCES pauses (interrupt_id) ON DELETE CASCADE,
                attempt_json TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL
            )""",
            "CREATE INDEX cross_scope_attempts_pause ON cross_scope_attempts (interrupt_id)",
            """CREATE TABLE spends (
                interrupt_id TEXT PRIMARY KEY,
                "by" TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                status TEXT NOT NULL
            )""",
            """CREATE TABLE checkpoints (
                checkpoint_id TEXT PRIMARY KEY,
                run_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                state TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                UNIQUE (run_id, version)
            )""",
            """CREATE TABLE audit (
                id BIGSERIAL PRIMARY KEY,
                at DOUBLE PRECISION NOT NULL,
                kind TEXT NOT NULL,
                run_id TEXT NOT NULL,
                interrupt_id TEXT NOT NULL,
                actor TEXT NOT NULL,
                detail TEXT NOT NULL
            )""",
            "CREATE INDEX audit_run ON audit (run_id)",
        ),
    ),
    Migration(
        2,
        SQLITE_MIGRATIONS[1].description,
        (
            "ALTER TABLE runs ADD COLUMN conversation_key TEXT NOT NULL DEFAULT ''",
            "UPDATE runs SET conversation_key = COALESCE(conversation::jsonb ->> 'key', '')",
            "CREATE INDEX runs_conversation ON runs (surface, conversation_key, created_at)",
        ),
    ),
    Migration(
        3,
        SQLITE_MIGRATIONS[2].description,
        ("ALTER TABLE pauses ADD COLUMN resume_claimed_until DOUBLE PRECISION",),
    ),
    Migration(
        4,
        SQLITE_MIGRATIONS[3].description,
        (
            "ALTER TABLE runs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE runs ADD COLUMN lease_until DOUBLE PRECISION",
            "ALTER TABLE runs ADD COLUMN delivery_error TEXT NOT NULL DEFAULT ''",
            "CREATE INDEX runs_status_lease ON runs (status, lease_until)",
            "ALTER TABLE pauses ADD COLUMN closed_by_id TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE pauses ADD COLUMN cross_scope_count INTEGER NOT NULL DEFAULT 0",
            """UPDATE pauses SET cross_scope_count = (
                SELECT COUNT(*) FROM cross_scope_attempts AS a
                WHERE a.interrupt_id = pauses.interrupt_id)""",
            "CREATE UNIQUE INDEX pauses_run_call ON pauses (run_id, tool_call_id)",
            """CREATE TABLE journal (
                run_id TEXT NOT NULL,
                step TEXT NOT NULL,
                value TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (run_id, step)
            )""",
            """CREATE TABLE outbox (
                id BIGSERIAL PRIMARY KEY,
                run_id TEXT NOT NULL,
                surface TEXT NOT NULL,
                kind TEXT NOT NULL,
                interrupt_id TEXT NOT NULL,
                body TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                next_at DOUBLE PRECISION NOT NULL,
                claimed_until DOUBLE PRECISION NOT NULL,
                claimed_by TEXT NOT NULL,
                last_error TEXT NOT NULL,
                done_at DOUBLE PRECISION
            )""",
            "CREATE INDEX outbox_due ON outbox (state, next_at)",
            "CREATE INDEX outbox_run ON outbox (run_id, state, id)",
        ),
    ),
    Migration(
        5,
        SQLITE_MIGRATIONS[4].description,
        (
            "CREATE TABLE installations (platform TEXT NOT NULL, key TEXT NOT NULL,"
            " blob TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
            " PRIMARY KEY (platform, key))",
        ),
    ),
    Migration(6, SQLITE_MIGRATIONS[5].description, _ADMIN),
    # Here the spends row's unique insert is what decides racing replicas, so
    # it stays; only the index pauses_run_call (run_id, tool_call_id) covers goes.
    Migration(7, SQLITE_MIGRATIONS[6].description, ("DROP INDEX pauses_run",)),
    Migration(
        8,
        SQLITE_MIGRATIONS[7].description,
        tuple(statement.replace(" REAL", " DOUBLE PRECISION") for statement in AGENTS_API),
    ),
    Migration(
        9,
        SQLITE_MIGRATIONS[8].description,
        (
            "CREATE TABLE seen_requests (key TEXT PRIMARY KEY,"
            " expires_at DOUBLE PRECISION NOT NULL, status INTEGER, body BYTEA, content_type TEXT)",
            "CREATE INDEX seen_requests_expiry ON seen_requests (expires_at)",
            "CREATE TABLE once_keys (key TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL,"
            " expires_at DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX once_keys_expiry ON once_keys (expires_at)",
        ),
    ),
    Migration(
        10,
        SQLITE_MIGRATIONS[9].description,
        tuple(statement.replace(" REAL", " DOUBLE PRECISION") for statement in POLICIES),
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version

# Waiting for another replica's migration, or rewriting a large table, may
# take longer than a request may: migrations lift the statement timeout.
_MIGRATION_SECONDS = 3600.0
_CREATE_TRACKING = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at DOUBLE PRECISION NOT NULL
)"""
# One lock per schema: replicas of one deployment wait for each other, while
# deployments (or tests) in other schemas of the same database do not.
_LOCK = "SELECT pg_advisory_lock(hashtextextended('chatops-bot:migrate:' || current_schema(), 0))"
_UNLOCK = (
    "SELECT pg_advisory_unlock(hashtextextended('chatops-bot:migrate:' || current_schema(), 0))"
)


async def _current_version(conn: Conn) -> int:
    version = int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"))
    if version > LATEST_VERSION:
        raise StoreError(
            f"the database has schema version {version}, newer than this bot knows "
            f"({LATEST_VERSION}); upgrade the bot to a release that knows it"
        )
    return version


async def migrate(conn: Conn, *, target: int = LATEST_VERSION) -> int:
    """Bring the schema up to ``target`` (tests stop early); returns the version reached."""
    if await conn.fetchval("SELECT current_schema()") is None:
        raise StoreError(
            "DATABASE_URL names no existing schema to create tables in; "
            "create the schema in its search_path first"
        )
    await conn.execute("SET statement_timeout = 0")
    await conn.execute(_LOCK, timeout=_MIGRATION_SECONDS)
    try:
        await conn.execute(_CREATE_TRACKING)
        await _current_version(conn)
        for migration in MIGRATIONS:
            if migration.version > target:
                break
            async with conn.transaction():
                # Re-read under the lock: another replica may have applied it.
                if await _current_version(conn) >= migration.version:
                    continue
                for statement in migration.sql:
                    await conn.execute(statement, timeout=_MIGRATION_SECONDS)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, description, applied_at)"
                    " VALUES ($1, $2, $3)",
                    migration.version,
                    migration.description,
                    time.time(),
                )
        return await _current_version(conn)
    finally:
        await conn.execute(_UNLOCK)
        # Back to the pool's setting: this connection serves requests next.
        await conn.execute("RESET statement_timeout")
