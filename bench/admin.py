"""Admin queries at scale: ``pending`` over 100,000 open questions, ``stats`` over 1,000,000 closed.

Rows are bulk-inserted straight into a temporary SQLite file (after the
store's own migrations made the schema and indexes), then the queries run
through the real ``AdminStore`` (``SqliteStores.admin``) as the bot calls
them. Then the same on PostgreSQL, in a fresh schema of the server at
``BOT_BENCH_POSTGRES_URL`` (default: the local test server), if the
PostgreSQL backend is present and the server answers: rows go in by COPY
with the counting triggers off, and the counters are rebuilt as migration
6 does. Prints figures; asserts nothing about time.

    .venv/bin/python bench/admin.py [--open 100000] [--closed 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.audit import event_digest, genesis, link
from bot.questions.records import PendingFilter
from bot.stores import SqliteStores
from bot.stores._audit_chain import INSERT_LINKED_AUDIT
from bot.stores.ports import AdminStore

SCOPES = [f"T1:C{n}" for n in range(50)]
NAMES = ["ask_user", "approval", "rollback_approval"]
REASONS = ["AlreadyAnswered", "NotAllowedToAnswer", "TokenExpired", "AnswerInvalid", "TokenInvalid"]
PAYLOAD = json.dumps({"questions": [{"question": "Deploy web to production?", "options": []}]})
BATCH = 50_000
PAUSE_COLUMNS = (
    "interrupt_id, run_id, scope, name, tool_call_id, checkpoint_id, payload, issued_at,"
    " expires_at, root_run_id, session_id, thread_id, status, answer, closed_by, closed_at,"
    " resumed_at, message_ref, closed_by_id, cross_scope_count"
)
RUN_COLUMNS = (
    "run_id, scope, surface, requester, text, created_at, conversation, status, updated_at,"
    " final_text, lease_owner, lease_until, delivery_error, conversation_key"
)


def _pauses(
    start: int, count: int, *, open_: bool, rng: random.Random
) -> Iterator[tuple[Any, ...]]:
    now = 1_800_000_000.0
    for n in range(start, start + count):
        issued = now - rng.uniform(0, 30 * 86400)
        if open_:
            status, closed_at = "outstanding", None
        else:
            roll = rng.random()
            status = "answered" if roll < 0.8 else "expired" if roll < 0.95 else "cancelled"
            closed_at = issued + rng.expovariate(1 / 600)
        yield (
            f"int_{n:012d}",
            f"run_{n:012d}",
            rng.choice(SCOPES),
            rng.choice(NAMES),
            f"call_{n}",
            f"run_{n:012d}:1",
            PAYLOAD,
            issued,
            issued + 86400,
            f"run_{n:012d}",
            "",
            "",
            status,
            None,
            "" if open_ else "someone",
            closed_at,
            closed_at,
            json.dumps({"channel": "C1", "ts": f"{n}.000100"}),
            "",
            0,
        )


def _runs(start: int, count: int, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    for n in range(start, start + count):
        yield (
            f"run_{n:012d}",
            "T1",
            "slack",
            f"slack:T1:U{rng.randrange(2000)}",
            "deploy web",
            1_800_000_000.0,
            "{}",
            "paused",
            1_800_000_000.0,
            "",
            "",
            None,
            "",
            "",
        )


def digest(detail: dict[str, Any]) -> str:
    return event_digest(1_800_000_000.0, "refused", "", "x", detail)


def populate(path: Path, *, opened: int, closed: int) -> float:
    """Bulk-insert the rows; returns the seconds it took."""
    rng = random.Random(11)
    started = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    # The audit's insert links each event with these (as the bridge's connections do).
    conn.create_function("audit_genesis", 1, genesis, deterministic=True)
    conn.create_function("audit_link", 2, link, deterministic=True)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")
    pause_sql = f"INSERT INTO pauses ({PAUSE_COLUMNS}) VALUES ({', '.join('?' * 20)})"  # noqa: S608
    run_sql = f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({', '.join('?' * 14)})"  # noqa: S608
    # Closed first, then open: the open questions are the newest, as in life.
    for start in range(0, closed, BATCH):
        conn.execute("BEGIN")
        conn.executemany(
            pause_sql, _pauses(start, min(BATCH, closed - start), open_=False, rng=rng)
        )
        conn.execute("COMMIT")
    for start in range(closed, closed + opened, BATCH):
        count = min(BATCH, closed + opened - start)
        conn.execute("BEGIN")
        conn.executemany(pause_sql, _pauses(start, count, open_=True, rng=rng))
        conn.executemany(run_sql, _runs(start, count, rng))
        conn.execute("COMMIT")
    reasons = [{"reason": rng.choice(REASONS)} for _ in range(closed // 10)]
    refusals = [
        (1_800_000_000.0, "refused", "", "", "x", json.dumps(reason), digest(reason))
        for reason in reasons
    ]
    conn.execute("BEGIN")
    conn.executemany(INSERT_LINKED_AUDIT, refusals)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return time.perf_counter() - started


async def timed(work: Callable[[], Awaitable[Any]], repeat: int) -> tuple[list[float], Any]:
    result: Any = None
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = await work()
        seconds.append(time.perf_counter() - started)
    return seconds, result


def figures(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(
        f"  {label:<42} median {statistics.median(ms):8.2f} ms   p99 {p99:8.2f} ms   (n={len(ms)})"
    )


async def measure(admin: AdminStore, *, last_cursor: int) -> None:
    """The figures, through the port the bot calls."""
    seconds, page = await timed(lambda: admin.pending(where=PendingFilter(), limit=21), 200)
    figures("pending, first page (20)", seconds)
    assert len(page) == 21, "the bench should have found a full page"
    for label, where in (
        ("pending channel=..., first page", PendingFilter(scope="T1:C7")),
        ("pending name=approval, first page", PendingFilter(name="approval")),
        ("pending user=... (~50 open), first page", PendingFilter(requester="slack:T1:U7")),
    ):
        seconds, _ = await timed(lambda where=where: admin.pending(where=where, limit=21), 200)
        figures(label, seconds)
    deep = str(last_cursor - 30)
    seconds, _ = await timed(
        lambda: admin.pending(where=PendingFilter(), after=deep, limit=21), 200
    )
    figures("pending, last page (keyset)", seconds)
    seconds, stats = await timed(admin.stats, 20)
    figures("stats over every question", seconds)
    print(
        f"  issued {stats.issued:,}, answered {stats.answered:,}, expired"
        f" {stats.expired:,}, cancelled {stats.cancelled:,}, refusals"
        f" {sum(stats.refusals.values()):,}, p50 {stats.answer_seconds_p50:.0f} s,"
        f" p90 {stats.answer_seconds_p90:.0f} s"
    )


async def sqlite_bench(opened: int, closed: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite3"
        stores = await SqliteStores.open(path)  # the schema, by the store's own migrations
        await stores.close()
        took = populate(path, opened=opened, closed=closed)
        print(f"sqlite: {opened:,} open + {closed:,} closed questions inserted in {took:.1f} s")
        stores = await SqliteStores.open(path)
        try:
            await measure(stores.admin, last_cursor=opened + closed)
        finally:
            await stores.close()


# What PostgresAdmin.pending runs for an unfiltered page, to show its plan.
_PG_FIRST_PAGE = (
    "SELECT p.seq FROM pauses AS p LEFT JOIN runs AS r ON r.run_id = p.run_id"
    " WHERE p.status = 'outstanding' AND p.seq > $1 ORDER BY p.seq LIMIT $2"
)
POSTGRES_URL = os.environ.get("BOT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


async def postgres_bench(opened: int, closed: int) -> None:
    try:
        import asyncpg

        from bot.stores.postgres import PostgresStores
    except ImportError as missing:
        print(f"postgresql: not run ({missing.name} is not installed in this checkout)")
        return
    try:
        conn = await asyncpg.connect(POSTGRES_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        print(f"postgresql: not run (no server at BOT_BENCH_POSTGRES_URL: {type(error).__name__})")
        return
    schema = f"bench_{secrets.token_hex(4)}"
    await conn.execute(f'CREATE SCHEMA "{schema}"')
    url = f"{POSTGRES_URL}?search_path={schema}"
    try:
        stores = await PostgresStores.open(url)  # the schema, by the store's own migrations
        await stores.close()
        await conn.execute(f'SET search_path = "{schema}"')
        took = await _copy(conn, opened=opened, closed=closed)
        print(f"postgresql: {opened:,} open + {closed:,} closed questions copied in {took:.1f} s")
        plan = await conn.fetch(f"EXPLAIN {_PG_FIRST_PAGE}", 0, 21)
        print("  plan of the first page: " + " / ".join(r[0].strip() for r in plan[:4]))
        stores = await PostgresStores.open(url)
        try:
            await measure(stores.admin, last_cursor=opened + closed)
        finally:
            await stores.close()
    finally:
        await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await conn.close()


async def _copy(conn: Any, *, opened: int, closed: int) -> float:
    rng = random.Random(11)
    started = time.perf_counter()
    columns = [c.strip() for c in PAUSE_COLUMNS.split(",")]
    await conn.execute("ALTER TABLE pauses DISABLE TRIGGER USER")
    await conn.execute("ALTER TABLE audit DISABLE TRIGGER USER")
    for start in range(0, closed, BATCH):
        rows = list(_pauses(start, min(BATCH, closed - start), open_=False, rng=rng))
        await conn.copy_records_to_table("pauses", records=rows, columns=columns)
    for start in range(closed, closed + opened, BATCH):
        count = min(BATCH, closed + opened - start)
        rows = list(_pauses(start, count, open_=True, rng=rng))
        await conn.copy_records_to_table("pauses", records=rows, columns=columns)
        runs = list(_runs(start, count, rng))
        await conn.copy_records_to_table(
            "runs", records=runs, columns=[c.strip() for c in RUN_COLUMNS.split(",")]
        )
    refusals = [
        (1_800_000_000.0, "refused", "", "", "x", json.dumps({"reason": rng.choice(REASONS)}))
        for _ in range(closed // 10)
    ]
    await conn.copy_records_to_table(
        "audit",
        records=refusals,
        columns=["at", "kind", "run_id", "interrupt_id", "actor", "detail"],
    )
    # The counters, rebuilt as migration 6 builds them from existing rows.
    await conn.execute(
        "UPDATE pause_counts SET n = COALESCE((SELECT COUNT(*) FROM pauses"
        " WHERE pauses.status = pause_counts.status), 0) WHERE shard = 0"
    )
    await conn.execute(
        "INSERT INTO answer_times (bucket, n) SELECT answer_bucket(GREATEST(COALESCE(closed_at,"
        " issued_at) - issued_at, 0)), COUNT(*) FROM pauses WHERE status = 'answered'"
        " GROUP BY 1 ON CONFLICT (bucket) DO UPDATE SET n = excluded.n"
    )
    await conn.execute(
        "INSERT INTO refusal_counts (reason, n) SELECT COALESCE(detail::jsonb ->> 'reason', ''),"
        " COUNT(*) FROM audit WHERE kind = 'refused' GROUP BY 1"
        " ON CONFLICT (reason) DO UPDATE SET n = excluded.n"
    )
    await conn.execute("ALTER TABLE pauses ENABLE TRIGGER USER")
    await conn.execute("ALTER TABLE audit ENABLE TRIGGER USER")
    await conn.execute("ANALYZE")
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--open", type=int, default=100_000)
    parser.add_argument("--closed", type=int, default=1_000_000)
    args = parser.parse_args()
    await sqlite_bench(args.open, args.closed)
    await postgres_bench(args.open, args.closed)


if __name__ == "__main__":
    asyncio.run(main())
