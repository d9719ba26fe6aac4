"""SQL written once for both backends: one statement text, a dialect for what differs.

Statements are written with ``?`` placeholders, one per value, in order;
PostgreSQL's connection numbers them (``$1``, ``$2`` ...) once per text.
What differs beyond placeholders (a function's name, a JSON test, a list
parameter, row locks) is a field of ``Dialect``, filled into the text with
``str.format``. A backend is a ``Statements``: how to run one statement, and
a few statements in one transaction.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.stores._rows import Row


@dataclass(frozen=True, slots=True)
class Dialect:
    """The pieces of SQL that are spelt differently."""

    name: str
    # The larger of two values.
    greatest: str
    # ``conversation``'s "key" is a JSON string.
    key_is_text: str
    # ``column IN`` a list passed as one parameter.
    in_list: str
    # Rows another writer is taking right now are passed over (PostgreSQL only).
    skip_locked: str
    # The LIMIT value that means no limit.
    no_limit: int | None
    # A question's answer's decision (an approval's), as text: what history filters by.
    decision: str
    # The audit's insert links each event into its chain itself, and the chains' heads are
    # brought up to date when read (SQLite, ``bot.stores._audit_chain``); otherwise a
    # trigger links each row before it is stored and moves its head (PostgreSQL's).
    links_audit: bool

    def list_value(self, values: Sequence[str]) -> Any:
        """The one parameter ``in_list`` takes."""
        return json.dumps(list(values)) if self.name == "sqlite" else list(values)


SQLITE = Dialect(
    "sqlite",
    "MAX",
    "json_type(conversation, '$.key') = 'text'",
    "IN (SELECT value FROM json_each(?))",
    "",
    -1,
    # A sealed answer (``data_keys``) is not JSON: it has no decision the SQL can read.
    "CASE WHEN json_valid(p.answer) THEN json_extract(p.answer, '$.decision') END",
    True,
)
POSTGRES = Dialect(
    "postgres",
    "GREATEST",
    "jsonb_typeof(conversation::jsonb -> 'key') = 'string'",
    "= ANY(?::text[])",
    "FOR UPDATE SKIP LOCKED",
    None,
    "(CASE WHEN p.answer LIKE '{%' THEN p.answer::jsonb ->> 'decision' END)",
    False,
)


# What a resume reads: the ports' reads, and SQLite's close ``with_turn`` inside its write.
CHECKPOINT_STATE = "SELECT state FROM checkpoints WHERE checkpoint_id = ?"
JOURNAL_STEPS = "SELECT step, value FROM journal WHERE run_id = ?"

# Admin ``stats`` reads, on counters triggers keep (migration 6); each backend reads the
# per-status counts its own way (PostgreSQL sums their shards).
REFUSAL_COUNTS = "SELECT reason, n FROM refusal_counts WHERE n > 0"
ESCALATIONS = "SELECT COALESCE(SUM(level), 0) FROM pauses WHERE level > 0"
# The first bucket whose running total passes the rank (0-based).
ANSWER_RANK = (
    "SELECT bucket FROM (SELECT bucket, SUM(n) OVER (ORDER BY bucket) AS upto"
    " FROM answer_times WHERE n > 0) AS t WHERE upto > ? ORDER BY bucket LIMIT 1"
)
DELIVERY_COUNTS = (
    "SELECT (SELECT COUNT(*) FROM outbox WHERE state = 'failed') AS failed,"
    " (SELECT COUNT(*) FROM outbox WHERE state = 'pending' AND attempts > 0) AS retrying"
)


@functools.lru_cache(maxsize=512)
def numbered(sql: str) -> str:
    """``?`` placeholders as PostgreSQL's ``$1, $2 ...``; our texts have no ``?`` in literals."""
    parts = sql.split("?")
    return "".join(f"{part}${i}" for i, part in enumerate(parts[:-1], start=1)) + parts[-1]


class Statements(Protocol):
    """One backend's way to run a statement; the shared ports (``_shared``) rely on it."""

    dialect: Dialect
    # The audit's insert (``bot.stores._audit_chain``): SQLite's links each event into its
    # chain itself; PostgreSQL's trigger links a plain one.
    audit_insert: str

    async def rows(self, sql: str, *args: Any) -> list[Row]:
        """Every row one statement returns."""
        ...

    async def many_rows(self, sql: str, *args: Any) -> list[Row]:
        """As ``rows``, for a statement whose work grows with a table, not a limit."""
        ...

    async def write(self, sql: str, *args: Any) -> int:
        """Run one writing statement in a transaction of its own; the rows it changed."""
        ...

    async def in_order(self, statements: Sequence[tuple[str, tuple[Any, ...]]]) -> bool:
        """Run the statements in one transaction, the later ones only if the first changed a
        row; whether it did."""
        ...
