"""How the bridge's own work grows with what is open: 1,000 open questions, then 10x, to ``--max``.

On SQLite (a temporary file) and on PostgreSQL (a fresh schema on
``BENCH_POSTGRES_URL``, default the local server; skipped, saying so, when
it is unreachable), the open questions grow through the lifecycle's own
write path (``RunService.start`` of a run that asks and stays paused, in
batches; ``bench/cycle.py``'s ``Cycles.park``), spread over seven scopes.
At each size, each operation runs ``--samples`` times on the store as the
server calls it, and its median (p50) is kept:

- ``ask + answer + resume``: one whole cycle (``bench/cycle.py``'s);
- ``pending first page``: the admin list's first 20 (``AdminStore.pending``);
- ``sweep, nothing due`` and ``sweep, 100 due``: the sweeper's read of the
  overdue (``Ledger.overdue``, 100 at most), now and a year ahead;
- ``reminder pass``: the read of the open questions with a policy
  (``Ledger.with_policies``);
- ``deliverer claim``: one claim of due posts (``Outbox.claim``).

Then one line per backend and operation,
``<backend> <operation>: p50 at <smallest> = X ms, at <largest> = Y ms (x<ratio>)``,
the bytes on disk per open question at the largest size, and last
``scale: worst ratio <r> (<backend> <operation>)``. Not measured here yet
(issue 45 item 1): the ``/v1`` create and list through a server process,
and that process's RSS.
Run: `.venv/bin/python bench/scale.py [--max 1000000] [--samples 20]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cycle import Cycles, cycles, postgres_schema  # noqa: E402 (needs ROOT on the path)
from bot.questions.records import PendingFilter  # noqa: E402

SMALLEST = 1_000
YEAR = 365 * 86_400.0

Operation = Callable[[], Awaitable[Any]]


def sizes(most: int) -> list[int]:
    """1,000 and each tenfold up to ``most``, and ``most`` itself last."""
    grown = [SMALLEST]
    while grown[-1] * 10 <= most:
        grown.append(grown[-1] * 10)
    if most > grown[-1]:
        grown.append(most)
    return grown


def operations(ours: Cycles) -> dict[str, Operation]:
    stores: Any = ours.stores

    async def cycle() -> None:
        await ours.run(1)

    async def pending() -> None:
        await stores.admin.pending(where=PendingFilter(), limit=20)

    async def nothing_due() -> None:
        await stores.ledger.overdue(time.time(), limit=100)

    async def hundred_due() -> None:
        due = await stores.ledger.overdue(time.time() + YEAR, limit=100)
        if len(due) != 100:
            raise SystemExit(f"a year ahead, {len(due)} questions were due, not 100")

    async def reminders() -> None:
        await stores.ledger.with_policies()

    async def claim() -> None:
        now = time.time()
        await stores.outbox.claim(now, until=now + 30, owner="bench", surfaces=["bench"])

    return {
        "ask + answer + resume": cycle,
        "pending first page": pending,
        "sweep, nothing due": nothing_due,
        "sweep, 100 due": hundred_due,
        "reminder pass": reminders,
        "deliverer claim": claim,
    }


async def p50_ms(operation: Operation, samples: int) -> float:
    await operation()  # warm: caches and prepared statements
    taken = []
    for _ in range(samples):
        began = time.perf_counter()
        await operation()
        taken.append((time.perf_counter() - began) * 1000)
    return statistics.median(taken)


async def grow(
    backend: str,
    url: str,
    ours: Cycles,
    args: argparse.Namespace,
    on_disk: Callable[[], Awaitable[int]],
) -> dict[str, dict[int, float]]:
    """Each operation's p50 (ms) at each size, keyed by operation then size."""
    figures: dict[str, dict[int, float]] = {}
    open_now = 0
    for size in sizes(args.max):
        began = time.perf_counter()
        await ours.park(size - open_now)
        open_now = size
        print(
            f"{backend}: {size:,} open ({time.perf_counter() - began:.1f} s to grow)",
            file=sys.stderr,
        )
        for name, operation in operations(ours).items():
            figures.setdefault(name, {})[size] = await p50_ms(operation, args.samples)
    disk = await on_disk()
    print(f"{backend} bytes on disk per open question at {open_now:,}: {disk / open_now:,.0f}")
    return figures


async def schema_bytes(url: str) -> int:
    schema = url.rsplit("=", 1)[1]
    conn = await asyncpg.connect(url)
    try:
        return int(
            await conn.fetchval(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')",
                schema,
            )
        )
    finally:
        await conn.close()


async def main(args: argparse.Namespace) -> int:
    results: dict[str, dict[str, dict[int, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.sqlite3"

        async def sqlite_bytes() -> int:
            files = Path(folder).glob("scale.sqlite3*")  # noqa: ASYNC240 - once, at the end
            return sum(p.stat().st_size for p in files)

        url = f"sqlite:///{path}"
        async with cycles(url) as ours:
            results["sqlite"] = await grow("sqlite", url, ours, args, sqlite_bytes)
    async with postgres_schema() as pg_url:
        if pg_url is not None:
            async with cycles(pg_url) as ours:

                async def postgres_bytes() -> int:
                    return await schema_bytes(pg_url)

                results["postgres"] = await grow("postgres", pg_url, ours, args, postgres_bytes)
    worst = (0.0, "", "")
    for backend, figures in results.items():
        for name, by_size in figures.items():
            smallest, largest = min(by_size), max(by_size)
            ratio = by_size[largest] / by_size[smallest]
            print(
                f"{backend} {name}: p50 at {smallest:,} = {by_size[smallest]:.2f} ms,"
                f" at {largest:,} = {by_size[largest]:.2f} ms (x{ratio:.2f})"
            )
            worst = max(worst, (ratio, backend, name))
    print(f"scale: worst ratio {worst[0]:.2f} ({worst[1]} {worst[2]})")
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--max", type=int, default=1_000_000, help=f"open questions at the end (>= {SMALLEST:,})"
    )
    parser.add_argument("--samples", type=int, default=20, help="runs of each operation per size")
    args = parser.parse_args(argv)
    if args.max < SMALLEST:
        parser.error(f"--max must be at least {SMALLEST:,}")
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
