"""More open questions, as copies of ones the lifecycle wrote (``bench/scale.py``'s growth).

Asking a question through the lifecycle costs a few milliseconds of Python
(the agent's turn, the checkpoint, the post and its delivery), so a million
of them would take most of an hour per backend on a small machine. Past its
first size the bench instead copies the questions it grew there through the
lifecycle's write paths (the template): every row the lifecycle wrote for
each of them (its run, question, checkpoint, outbox rows, audit events and
``/v1`` request), each copy with fresh identifiers of the same shape (the
same in every column and inside the JSON that names them) and its times
moved on by as long as the template is old, so its reminders, escalations
and expiry fall due when the original's would have, counted from now.
Inserted in batches through the store's own triggers: each audit event gets
its digest from ``bot.audit`` and is linked into its run's chain by the store,
and the per-status counters count each question.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from bot.audit import event_digest
from bot.stores._audit_chain import INSERT_AUDIT
from bot.stores._sql import numbered

# The tables the lifecycle writes a question into, and the identity column each
# numbers its rows by (left to the database); the audit is inserted as the store does.
TABLES = {
    "runs": "seq",
    "pauses": "seq",
    "checkpoints": "",
    "outbox": "id",
    "api_questions": "",
}
# Columns that hold a time: each copy's are moved on by the template's age.
TIMES = frozenset(
    {
        "created_at",
        "updated_at",
        "lease_until",
        "issued_at",
        "expires_at",
        "closed_at",
        "resumed_at",
        "resume_claimed_until",
        "nudge_due_at",
        "next_at",
        "claimed_until",
        "done_at",
        "at",
        "purged_at",
    }
)
# Columns whose text is JSON that may name an identifier (as a JSON string).
JSON_TEXT = frozenset({"conversation", "state", "message_ref", "posts", "payload"})
_AUDIT_COLUMNS = ("at", "kind", "run_id", "interrupt_id", "actor", "detail")


def _fresh(old: str, counters: dict[str, int]) -> str:
    """An identifier of ``old``'s shape: a random hex tail, or the next number of a
    numbered one (``run_bench_7``, ``C7``, ``m7``)."""
    head, sep, tail = old.rpartition("_")
    if sep and tail and all(c in "0123456789abcdef" for c in tail) and len(tail) >= 16:
        return f"{head}_{secrets.token_hex(len(tail) // 2)}"
    stem = old.rstrip("0123456789")
    if stem != old:
        counters[stem] = counters.get(stem, 0) + 1
        return f"{stem}{counters[stem]}"
    raise ValueError(f"no shape to copy for the identifier {old!r}")


@dataclass
class Template:
    """The rows the lifecycle wrote for some questions, by table, grouped by run."""

    runs: list[str]
    rows: dict[str, dict[str, list[dict[str, Any]]]]
    written_at: float
    # Numbered identifiers continue from the largest number the template used.
    counters: dict[str, int] = field(default_factory=dict)

    def number_after(self, used: dict[str, int]) -> None:
        """Number the copies' identifiers of each stem after ``used``'s number for it."""
        for stem, number in used.items():
            self.counters[stem] = max(self.counters.get(stem, 0), number)

    def copies(self, n: int) -> Iterator[dict[str, list[dict[str, Any]]]]:
        """``n`` copies of template runs in turn, each a table's new rows."""
        shift = 0.0
        for i in range(n):
            if i % len(self.runs) == 0:  # each round of copies asked when it is made
                shift = time.time() - self.written_at
            run_id = self.runs[i % len(self.runs)]
            yield self._copy(run_id, shift)

    def _copy(self, run_id: str, shift: float) -> dict[str, list[dict[str, Any]]]:
        mapping = self._identifiers(run_id)
        quoted = [(f'"{old}"', f'"{new}"') for old, new in mapping.items()]
        copied: dict[str, list[dict[str, Any]]] = {}
        for table, by_run in self.rows.items():
            out = []
            for row in by_run.get(run_id, ()):
                new: dict[str, Any] = {}
                for column, value in row.items():
                    if isinstance(value, str):
                        if value in mapping:
                            value = mapping[value]
                        elif column in JSON_TEXT:
                            for old, fresh in quoted:
                                value = value.replace(old, fresh)
                    elif column in TIMES and value is not None:
                        value = value + shift
                    new[column] = value
                out.append(new)
            copied[table] = out
        return copied

    def _identifiers(self, run_id: str) -> dict[str, str]:
        """Each identifier the run's rows hold, and its copy's."""
        mapping = {run_id: _fresh(run_id, self.counters)}
        for row in self.rows["pauses"].get(run_id, ()):
            for column in ("interrupt_id", "tool_call_id"):
                mapping[row[column]] = _fresh(row[column], self.counters)
            if row["session_id"]:
                mapping[row["session_id"]] = _fresh(row["session_id"], self.counters)
            if row["checkpoint_id"]:
                # ``<run_id>:<16 hex>``, as the agent names a checkpoint.
                mapping[row["checkpoint_id"]] = f"{mapping[run_id]}:{secrets.token_hex(8)}"
            if row["message_ref"]:
                message = json.loads(row["message_ref"])["message"]
                mapping[message] = _fresh(message, self.counters)
        for row in self.rows["runs"][run_id]:
            key = row["conversation_key"]
            if key and key not in mapping:
                mapping[key] = _fresh(key, self.counters)
        for row in self.rows["api_questions"].get(run_id, ()):
            mapping[row["idempotency_key"]] = _fresh(row["idempotency_key"], self.counters)
        return mapping


def _grouped(
    table: str, rows: Sequence[Any], runs: dict[str, str]
) -> dict[str, list[dict[str, Any]]]:
    """Rows by the run they belong to (``runs``: a question's run, by its interrupt id)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        record = dict(row)
        record.pop(TABLES.get(table) or "-", None)
        run_id = record.get("run_id") or runs[record["interrupt_id"]]
        grouped.setdefault(run_id, []).append(record)
    return grouped


def _numbered_max(template: Template) -> None:
    """Start each numbered identifier after the largest the template (and its grower) used."""
    for by_run in template.rows.values():
        for rows in by_run.values():
            for row in rows:
                for value in row.values():
                    if isinstance(value, str) and value[-1:].isdigit():
                        stem = value.rstrip("0123456789")
                        number = int(value[len(stem) :])
                        template.counters[stem] = max(template.counters.get(stem, 0), number)


def _audit_params(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each event as the store inserts it: its digest over what it says, as ``bot.audit``
    digests it; the store's trigger links it into its run's chain."""
    params = []
    for row in rows:
        values = tuple(row[c] for c in _AUDIT_COLUMNS)
        at, kind, _, interrupt_id, actor, detail = values
        digest = event_digest(at, kind, interrupt_id, actor, json.loads(detail))
        params.append((*values, digest))
    return params


def _insert(
    table: str, rows: list[dict[str, Any]], mark: Callable[[int], str]
) -> tuple[str, list[tuple[Any, ...]]]:
    """The INSERT of ``rows`` (all with the first's columns) into ``table``, its
    placeholders spelt by ``mark`` (1-based: ``?`` for SQLite, ``$n`` for PostgreSQL)."""
    names = list(rows[0])
    marks = ", ".join(mark(i) for i in range(1, len(names) + 1))
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})"  # noqa: S608 - ours
    return sql, [tuple(r[c] for c in names) for r in rows]


def _columns(copies: list[dict[str, list[dict[str, Any]]]], table: str) -> list[dict[str, Any]]:
    return [row for copy in copies for row in copy.get(table, ())]


class SqliteCopier:
    """Copies on the store's own SQLite connection (its functions link the audit chain)."""

    def __init__(self, stores: Any) -> None:
        self._db = stores._db

    async def template(self) -> Template:
        def pending(conn: sqlite3.Connection) -> int:
            return int(conn.execute(_PENDING).fetchone()[0])

        while await self._db.run(pending):  # noqa: ASYNC110 - the store, polled
            await asyncio.sleep(0.05)

        def read(conn: sqlite3.Connection) -> Template:
            return _template(lambda sql: conn.execute(sql).fetchall())

        template: Template = await self._db.run(read)
        return template

    async def open_count(self) -> int:
        def count(conn: sqlite3.Connection) -> int:
            return int(conn.execute(_OPEN_COUNT).fetchone()[0])

        counted: int = await self._db.run(count)
        return counted

    async def insert(self, copies: list[dict[str, list[dict[str, Any]]]]) -> None:
        def insert(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in TABLES:
                    if rows := _columns(copies, table):
                        sql, values = _insert(table, rows, lambda _: "?")
                        conn.executemany(sql, values)
                audit = _audit_params(_columns(copies, "audit"))
                conn.executemany(self._db.audit_insert, audit)  # it links each event
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            # The store checkpoints its log every so many commits; a batch is one commit of
            # many pages, so its pages are copied into the database now, and the log restarts
            # (left alone, it grows by every page each batch touches: gigabytes by a million).
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        await self._db.run(insert)


class PostgresCopier:
    """Copies through a connection of their own (the chain and counters are triggers)."""

    def __init__(self, url: str) -> None:
        self._url = url

    async def template(self) -> Template:
        conn = await asyncpg.connect(self._url)
        try:
            while await conn.fetchval(_PENDING):  # noqa: ASYNC110 - the store, polled
                await asyncio.sleep(0.05)
            fetched: dict[str, list[Any]] = {}
            for sql in _TEMPLATE_READS.values():
                fetched[sql] = await conn.fetch(sql)
            return _template(lambda sql: fetched[sql])
        finally:
            await conn.close()

    async def open_count(self) -> int:
        conn = await asyncpg.connect(self._url)
        try:
            return int(await conn.fetchval(_OPEN_COUNT))
        finally:
            await conn.close()

    async def insert(self, copies: list[dict[str, list[dict[str, Any]]]]) -> None:
        conn = await asyncpg.connect(self._url)
        try:
            async with conn.transaction():
                for table in TABLES:
                    if rows := _columns(copies, table):
                        sql, values = _insert(table, rows, lambda i: f"${i}")
                        await conn.executemany(sql, values)
                audit = _audit_params(_columns(copies, "audit"))
                await conn.executemany(numbered(INSERT_AUDIT), audit)
        finally:
            await conn.close()


# The open questions, counted once a size is grown: the bench checks it reached the size.
_OPEN_COUNT = "SELECT COUNT(*) FROM pauses WHERE status = 'outstanding'"
# Posts still owed: the template is read once the deliverer has made them all, so no copy
# owes a post (its rows say where it was posted, as the original's do).
_PENDING = "SELECT COUNT(*) FROM outbox WHERE state = 'pending'"
# What the template is read with: every open question's rows (the grown ones, before
# any operation has run), by table.
_OPEN = "(SELECT run_id FROM pauses WHERE status = 'outstanding')"
_TEMPLATE_READS = {
    "runs": f"SELECT * FROM runs WHERE run_id IN {_OPEN} ORDER BY seq",  # noqa: S608 - ours
    "pauses": "SELECT * FROM pauses WHERE status = 'outstanding' ORDER BY seq",
    "checkpoints": f"SELECT * FROM checkpoints WHERE run_id IN {_OPEN}",  # noqa: S608 - ours
    "outbox": f"SELECT * FROM outbox WHERE run_id IN {_OPEN} ORDER BY id",  # noqa: S608 - ours
    "api_questions": "SELECT a.* FROM api_questions AS a JOIN pauses AS p"
    " ON p.interrupt_id = a.interrupt_id WHERE p.status = 'outstanding'",
    "audit": f"SELECT {', '.join(_AUDIT_COLUMNS)} FROM audit"  # noqa: S608 - ours
    f" WHERE run_id IN {_OPEN} ORDER BY id",
}


def _template(fetch: Any) -> Template:
    rows = {table: fetch(sql) for table, sql in _TEMPLATE_READS.items()}
    runs = [row["run_id"] for row in rows["runs"]]
    by_interrupt = {row["interrupt_id"]: row["run_id"] for row in rows["pauses"]}
    grouped = {table: _grouped(table, found, by_interrupt) for table, found in rows.items()}
    template = Template(runs, grouped, time.time())
    _numbered_max(template)
    return template
