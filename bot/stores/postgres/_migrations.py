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

from bot.audit import BRIDGE_CHAIN, GENESIS_PREFIX, Linker
from bot.stores._audit_chain import carried
from bot.stores._migration_texts import (
    AUDIT_CARRY,
    AUDIT_CHAINS,
    NUDGE_CARRY,
    NUDGE_DUE,
    NUDGE_DUE_ONLY,
)
from bot.stores._rows import carried_nudges
from bot.stores._sql import numbered
from bot.stores.errors import StoreError
from bot.stores.postgres._db import Conn
from bot.stores.sqlite import MIGRATIONS as SQLITE_MIGRATIONS
from bot.stores.sqlite import Migration

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

# Version 13 as SQLite's, but PostgreSQL swaps a UNIQUE constraint in place.
_KEY_IDS = (
    "ALTER TABLE api_keys ADD COLUMN key_id TEXT NOT NULL DEFAULT ''",
    # An id, not a secret: md5 of random() is random enough to tell keys apart.
    "UPDATE api_keys SET key_id = 'key_' || substr(md5(random()::text || clock_timestamp()::text"
    " || name), 1, 24)",
    "CREATE UNIQUE INDEX api_keys_id ON api_keys (key_id)",
    "ALTER TABLE api_questions ADD COLUMN key_id TEXT NOT NULL DEFAULT ''",
    "UPDATE api_questions AS a SET key_id = COALESCE((SELECT k.key_id FROM api_keys AS k"
    " WHERE k.name = a.key_name), 'name:' || a.key_name)",
    "ALTER TABLE api_questions ALTER COLUMN key_id DROP DEFAULT",
    "ALTER TABLE api_questions DROP CONSTRAINT api_questions_key_name_idempotency_key_key",
    "ALTER TABLE api_questions ADD UNIQUE (key_id, idempotency_key)",
    "DROP INDEX api_questions_newest",
    "CREATE INDEX api_questions_newest ON api_questions (key_id, created_at, interrupt_id)",
)

# Append only, in step with ``bot.stores.sqlite._migrations``: never edit one that shipped.
# SQLite's spellings that PostgreSQL writes otherwise; a migration that needs
# nothing more than these is SQLite's own text, spelled for PostgreSQL.
_SPELLINGS = (
    ("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"),
    ("seq INTEGER PRIMARY KEY", "seq BIGSERIAL PRIMARY KEY"),
    (" by TEXT", ' "by" TEXT'),  # a reserved word here
    (" REAL", " DOUBLE PRECISION"),
    (" BLOB", " BYTEA"),
    # Chains sort by code point, as the verifier compares them.
    ("chain TEXT", 'chain TEXT COLLATE "C"'),
)


def _as_in_sqlite(version: int) -> Migration:
    """SQLite's migration ``version``, with each statement spelled for PostgreSQL."""
    migration = SQLITE_MIGRATIONS[version - 1]
    return Migration(version, migration.description, _spelled(migration.sql))


def _spelled(sql: tuple[str, ...]) -> tuple[str, ...]:
    statements = []
    for statement in sql:
        for sqlite_word, postgres_word in _SPELLINGS:
            statement = statement.replace(sqlite_word, postgres_word)
        statements.append(statement)
    return tuple(statements)


# bot.audit's genesis and link in SQL: the trigger links each new event into its chain
# under that chain's head row alone, so only events of the same run wait on each other.
def _sha256(text: str) -> str:
    return f"encode(sha256(convert_to({text}, 'UTF8')), 'hex')"


_AUDIT_LINK_FUNCTION = f"""CREATE FUNCTION audit_link() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.chain := COALESCE(NULLIF(NEW.run_id, ''), '{BRIDGE_CHAIN}');
    INSERT INTO audit_heads AS h (chain, seq, hash)
    VALUES (NEW.chain, 1, {_sha256(_sha256(f"'{GENESIS_PREFIX}' || NEW.chain") + " || NEW.digest")})
    ON CONFLICT (chain) DO UPDATE SET seq = h.seq + 1, hash = {_sha256("h.hash || NEW.digest")}
    RETURNING h.seq, h.hash INTO NEW.seq, NEW.hash;
    RETURN NEW;
END $$"""  # noqa: S608 - our own text
_AUDIT_LINK_TRIGGER = (
    "CREATE TRIGGER audit_link BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION audit_link()"
)
# Version 18: the head moved by an UPDATE first. The insert's VALUES (the genesis, two
# more hashes) were computed for every event, though only a chain's first uses them; now
# only a chain with no head yet inserts one, and a race to insert it still ends in the
# update.
_HEAD_LINK = _sha256("h.hash || NEW.digest")
_FIRST_LINK = _sha256(_sha256(f"'{GENESIS_PREFIX}' || NEW.chain") + " || NEW.digest")
_AUDIT_LINK_UPDATE_FIRST = f"""CREATE OR REPLACE FUNCTION audit_link() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.chain := COALESCE(NULLIF(NEW.run_id, ''), '{BRIDGE_CHAIN}');
    UPDATE audit_heads AS h SET seq = h.seq + 1, hash = {_HEAD_LINK}
    WHERE h.chain = NEW.chain RETURNING h.seq, h.hash INTO NEW.seq, NEW.hash;
    IF NOT FOUND THEN
        INSERT INTO audit_heads AS h (chain, seq, hash)
        VALUES (NEW.chain, 1, {_FIRST_LINK})
        ON CONFLICT (chain) DO UPDATE SET seq = h.seq + 1, hash = {_HEAD_LINK}
        RETURNING h.seq, h.hash INTO NEW.seq, NEW.hash;
    END IF;
    RETURN NEW;
END $$"""  # noqa: S608 - our own text


async def _carry_audit(conn: Conn) -> None:
    """Link the rows written before migration 15, oldest first, into their chains."""
    linker, after = Linker(), 0
    while rows := await conn.fetch(numbered(AUDIT_CARRY), after):
        linked = carried([tuple(row) for row in rows], linker)
        await conn.execute(
            "UPDATE audit SET digest = l.digest, chain = l.chain, seq = l.seq, hash = l.hash"
            " FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::bigint[])"
            " AS l(digest, chain, seq, hash, id) WHERE audit.id = l.id",
            *([row[i] for row in linked] for i in range(5)),
        )
        after = rows[-1][0]
    heads = linker.heads.items()
    await conn.execute(
        "INSERT INTO audit_heads (chain, seq, hash)"
        " SELECT * FROM unnest($1::text[], $2::int[], $3::text[])",
        [chain for chain, _ in heads],
        [seq for _, (seq, _) in heads],
        [hashed for _, (_, hashed) in heads],
    )


async def _carry_nudges(conn: Conn) -> None:
    """When each question open before migration 16 owes its next reminder or step."""
    carried = carried_nudges([tuple(row) for row in await conn.fetch(NUDGE_CARRY)])
    await conn.execute(
        "UPDATE pauses SET nudge_due_at = c.due FROM unnest($1::float8[], $2::text[])"
        " AS c(due, interrupt_id) WHERE pauses.interrupt_id = c.interrupt_id",
        [due for due, _ in carried],
        [interrupt_id for _, interrupt_id in carried],
    )


# Rows a migration carries in Python, after its statements, in its transaction.
_CARRIES = {15: _carry_audit, 16: _carry_nudges}

# The claim's pending rows in id order: with statistics that count many rows pending (a
# burst of posts, or no analyze since), the planner otherwise walks the primary key over
# every delivered row to find the first hundred pending; this index holds only those.
_OUTBOX_PENDING = "CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending'"
# A row that leaves the outbox's pending rows (or a question that is closed or nudged)
# leaves its old index entry behind until a vacuum: the claim and the sweeps step over
# them. By default autovacuum waits for a fifth of the table to be dead, so what they
# step over grows with the table; a fixed count keeps it flat, however large it is.
_VACUUMED_BY_COUNT = tuple(
    f"ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0,"
    " autovacuum_vacuum_threshold = 10000, autovacuum_analyze_scale_factor = 0,"
    " autovacuum_analyze_threshold = 10000)"
    for table in ("outbox", "pauses")
)


MIGRATIONS: tuple[Migration, ...] = (
    _as_in_sqlite(1),
    Migration(
        2,
        SQLITE_MIGRATIONS[1].description,
        (
            "ALTER TABLE runs ADD COLUMN conversation_key TEXT NOT NULL DEFAULT ''",
            "UPDATE runs SET conversation_key = COALESCE(conversation::jsonb ->> 'key', '')",
            "CREATE INDEX runs_conversation ON runs (surface, conversation_key, created_at)",
        ),
    ),
    _as_in_sqlite(3),
    _as_in_sqlite(4),
    _as_in_sqlite(5),
    Migration(6, SQLITE_MIGRATIONS[5].description, _ADMIN),
    # Here the spends row's unique insert is what decides racing replicas, so
    # it stays; only the index pauses_run_call (run_id, tool_call_id) covers goes.
    Migration(7, SQLITE_MIGRATIONS[6].description, ("DROP INDEX pauses_run",)),
    _as_in_sqlite(8),
    _as_in_sqlite(9),
    _as_in_sqlite(10),
    _as_in_sqlite(11),
    _as_in_sqlite(12),
    Migration(13, SQLITE_MIGRATIONS[12].description, _KEY_IDS),
    _as_in_sqlite(14),
    Migration(
        15,
        SQLITE_MIGRATIONS[14].description,
        (*_spelled(AUDIT_CHAINS), _AUDIT_LINK_FUNCTION, _AUDIT_LINK_TRIGGER),
    ),
    Migration(
        16,
        SQLITE_MIGRATIONS[15].description,
        (*_spelled(NUDGE_DUE), _OUTBOX_PENDING, *_VACUUMED_BY_COUNT),
    ),
    # The audit's part is SQLite's alone: here the trigger links a row before it is stored
    # (BEFORE INSERT), so the chain index never holds an unlinked one, and the heads are
    # rewritten in place (HOT).
    Migration(17, SQLITE_MIGRATIONS[16].description, NUDGE_DUE_ONLY),
    # Here the trigger still links each row under its head's lock: it moves the head with
    # an UPDATE first; and the index by run goes, as in SQLite.
    Migration(
        18, SQLITE_MIGRATIONS[17].description, ("DROP INDEX audit_run", _AUDIT_LINK_UPDATE_FIRST)
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
                carry = _CARRIES.get(migration.version)
                if carry is not None:
                    await carry(conn)
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
