"""Admin queries at scale: ``pending`` over 100,000 open questions, ``stats`` over 1,000,000 closed.

Rows are bulk-inserted straight into a temporary SQLite file (after the
store's own migrations made the schema and indexes), then the queries run
through the real ``AdminStore`` (``SqliteStores.admin``) as the bot calls
them. Prints figures; asserts nothing about time.

    .venv/bin/python bench/admin.py [--open 100000] [--closed 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.stores import SqliteStores
from bot.stores.records import PendingFilter

SCOPES = [f"T1:C{n}" for n in range(50)]
NAMES = ["ask_user", "approval", "rollback_approval"]
REASONS = ["AlreadyAnswered", "NotAllowedToAnswer", "TokenExpired", "AnswerInvalid", "TokenInvalid"]
PAYLOAD = json.dumps({"questions": [{"question": "Deploy web to production?", "options": []}]})
BATCH = 50_000


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


def populate(path: Path, *, opened: int, closed: int) -> float:
    """Bulk-insert the rows; returns the seconds it took."""
    rng = random.Random(11)
    started = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")
    pause_sql = (
        "INSERT INTO pauses (interrupt_id, run_id, scope, name, tool_call_id, checkpoint_id,"
        " payload, issued_at, expires_at, root_run_id, session_id, thread_id, status, answer,"
        " closed_by, closed_at, resumed_at, message_ref, closed_by_id, cross_scope_count)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    run_sql = (
        "INSERT INTO runs (run_id, scope, surface, requester, text, created_at, conversation,"
        " status, updated_at, final_text, lease_owner, lease_until, delivery_error,"
        " conversation_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
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
    refusals = [
        (1_800_000_000.0, "refused", "", "", "x", json.dumps({"reason": rng.choice(REASONS)}))
        for _ in range(closed // 10)
    ]
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        refusals,
    )
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
    print(f"{label:<44} median {statistics.median(ms):8.2f} ms   p99 {p99:8.2f} ms   (n={len(ms)})")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--open", type=int, default=100_000)
    parser.add_argument("--closed", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite3"
        stores = await SqliteStores.open(path)  # the schema, by the store's own migrations
        await stores.close()
        took = populate(path, opened=args.open, closed=args.closed)
        print(
            f"sqlite: {args.open:,} open + {args.closed:,} closed questions"
            f" inserted in {took:.1f} s"
        )
        stores = await SqliteStores.open(path)
        admin = stores.admin
        try:
            seconds, page = await timed(lambda: admin.pending(where=PendingFilter(), limit=21), 200)
            figures("pending, first page (20)", seconds)
            seconds, _ = await timed(
                lambda: admin.pending(where=PendingFilter(scope="T1:C7"), limit=21), 200
            )
            figures("pending channel=..., first page", seconds)
            seconds, _ = await timed(
                lambda: admin.pending(where=PendingFilter(name="approval"), limit=21), 200
            )
            figures("pending name=approval, first page", seconds)
            seconds, _ = await timed(
                lambda: admin.pending(where=PendingFilter(requester="slack:T1:U7"), limit=21), 200
            )
            figures("pending user=... (~50 open), first page", seconds)
            deep = str(args.closed + args.open - 30)
            seconds, _ = await timed(
                lambda: admin.pending(where=PendingFilter(), after=deep, limit=21), 200
            )
            figures("pending, last page (keyset)", seconds)
            assert len(page) == 21, "the bench should have found a full page"
            seconds, stats = await timed(admin.stats, 5)
            figures("stats over every question", seconds)
            print(
                f"  issued {stats.issued:,}, answered {stats.answered:,}, expired"
                f" {stats.expired:,}, cancelled {stats.cancelled:,}, refusals"
                f" {sum(stats.refusals.values()):,}, p50 {stats.answer_seconds_p50:.0f} s,"
                f" p90 {stats.answer_seconds_p90:.0f} s"
            )
        finally:
            await stores.close()
    print("postgresql: not run (see README: the PostgreSQL backend has no admin store yet)")


if __name__ == "__main__":
    asyncio.run(main())
