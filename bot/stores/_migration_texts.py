"""Migration texts both backends apply as written (SQLite's REAL read as DOUBLE PRECISION
on PostgreSQL): the agents API's tables and the approval policies' columns.
"""

# The agents API (``bot.api``): the question's own answerers, an API
# question's request, and the keys agents sign in with (only their hashes).
# Kept as text PostgreSQL's migration reuses, REAL spelled for each.
AGENTS_API = (
    "ALTER TABLE pauses ADD COLUMN answerers TEXT NOT NULL DEFAULT '[]'",
    """CREATE TABLE api_questions (
                interrupt_id TEXT PRIMARY KEY,
                key_name TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                body_hash TEXT NOT NULL,
                kind TEXT NOT NULL,
                created_at REAL NOT NULL,
                callback_url TEXT,
                metadata TEXT,
                run_ref TEXT,
                UNIQUE (key_name, idempotency_key)
            )""",
    "CREATE INDEX api_questions_newest ON api_questions (key_name, created_at, interrupt_id)",
    """CREATE TABLE api_keys (
                name TEXT PRIMARY KEY,
                key_hash TEXT NOT NULL UNIQUE,
                routes TEXT NOT NULL,
                created_at REAL NOT NULL
            )""",
)


# Approval policies (``bot.questions.quorum``): the question's policy, its tally,
# level and reminders, and one vote per person under a quorum. Text PostgreSQL reuses.
POLICIES = (
    "ALTER TABLE pauses ADD COLUMN policy TEXT",
    "ALTER TABLE pauses ADD COLUMN tally TEXT",
    "ALTER TABLE pauses ADD COLUMN level INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE pauses ADD COLUMN reminders INTEGER NOT NULL DEFAULT 0",
    """CREATE TABLE votes (
                interrupt_id TEXT NOT NULL,
                voter TEXT NOT NULL,
                display TEXT NOT NULL,
                decision TEXT NOT NULL,
                answer TEXT NOT NULL,
                at REAL NOT NULL,
                PRIMARY KEY (interrupt_id, voter)
            )""",
    # Only escalated questions: what ``stats`` sums the levels of.
    "CREATE INDEX pauses_escalated ON pauses (level) WHERE level > 0",
)


# One question on several routes (``bot.questions.posts``): its further posts, each with
# the posted message's reference. Text PostgreSQL reuses.
MULTI_ROUTE = ("ALTER TABLE pauses ADD COLUMN posts TEXT NOT NULL DEFAULT '[]'",)


# A key's own rate limit (``bot.api``): questions it may create a minute, NULL for the
# deployment's default. Text PostgreSQL reuses.
KEY_RATES = ("ALTER TABLE api_keys ADD COLUMN creates_per_minute INTEGER",)


# Traces (``bot.tracing``): the W3C traceparent of the span that asked the question, so
# each later step, in whichever process and whenever, is a span of the same trace; ''
# when it was asked untraced. Text PostgreSQL reuses.
TRACES = ("ALTER TABLE pauses ADD COLUMN trace_parent TEXT NOT NULL DEFAULT ''",)


# The tamper-evident audit (``bot.audit``): each event's digest, chain, number in it and
# hash; each chain's head (``signed``: the number the latest checkpoint signed); the
# signed checkpoints. No index on the heads but their key: every event moves one, and
# PostgreSQL then rewrites it in place (HOT); a checkpoint reads them all once instead.
# NULL until linked, so rows written before are carried in the same migration
# (``AUDIT_CARRY``). Each backend adds the trigger that links new rows.
AUDIT_CHAINS = (
    "ALTER TABLE audit ADD COLUMN digest TEXT",
    "ALTER TABLE audit ADD COLUMN chain TEXT",
    "ALTER TABLE audit ADD COLUMN seq INTEGER",
    "ALTER TABLE audit ADD COLUMN hash TEXT",
    "CREATE UNIQUE INDEX audit_chain ON audit (chain, seq)",
    """CREATE TABLE audit_heads (
                chain TEXT PRIMARY KEY,
                seq INTEGER NOT NULL,
                hash TEXT NOT NULL,
                signed INTEGER NOT NULL DEFAULT 0
            )""",
    # Retention (``bot.stores._retention``): when a row's content was purged.
    "ALTER TABLE audit ADD COLUMN purged_at REAL",
    "ALTER TABLE pauses ADD COLUMN purged_at REAL",
    """CREATE TABLE audit_checkpoints (
                seq INTEGER PRIMARY KEY,
                at REAL NOT NULL,
                body TEXT NOT NULL
            )""",
)
# Rows written before the chains existed, oldest first, a batch at a time.
AUDIT_CARRY = (
    "SELECT id, at, kind, run_id, interrupt_id, actor, detail FROM audit"
    " WHERE seq IS NULL AND id > ? ORDER BY id LIMIT 1000"
)


# When each open question's next reminder or escalation step falls due
# (``quorum.nudge_due_at``; NULL: none), so the sweeper's pass reads the questions due by
# index rather than every open one with a policy. Open questions with a policy are carried
# in the same migration (``NUDGE_CARRY``); a closed one owes nothing, and the index's
# status leads, so its time is never read again.
NUDGE_DUE = (
    "ALTER TABLE pauses ADD COLUMN nudge_due_at REAL",
    "CREATE INDEX pauses_nudge_due ON pauses (status, nudge_due_at)",
)
NUDGE_CARRY = (
    "SELECT interrupt_id, policy, issued_at, reminders, level FROM pauses"
    " WHERE status = 'outstanding' AND policy IS NOT NULL"
)

# Only the questions that owe a reminder or step are in that index (migration 17): most
# have no policy, so asking and closing them leave it alone, and the sweeper's read
# (``nudge_due_at <= ?``) implies the index's condition. Both backends.
NUDGE_DUE_ONLY = (
    "DROP INDEX pauses_nudge_due",
    "CREATE INDEX pauses_nudge_due ON pauses (status, nudge_due_at) WHERE nudge_due_at IS NOT NULL",
)
