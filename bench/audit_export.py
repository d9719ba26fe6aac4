"""``python -m bot audit export`` and ``verify`` over 100,000 and then 1,000,000 events.

Events are written as the bridge writes them (each linked by the store's
trigger), four per run, with a checkpoint signed after every 10,000, on a
SQLite file and then on PostgreSQL (a fresh schema on ``BENCH_POSTGRES_URL``,
default the local server's ``test`` database, dropped afterwards; skipped,
saying so, when no server answers). Each command runs in a process of its
own; its peak resident memory is the child's own high-water mark (``VmHWM``,
read from /proc while it runs), so what is printed is the export's and the
verifier's own.
Run: `.venv/bin/python bench/audit_export.py [events] [--backend sqlite|postgres]`
(default 1,000,000 events, both backends).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.audit import checkpoint_keys
from bot.stores import AuditEvent, SqliteStores

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench.cycle
KEY = "kbench:" + "b" * 48
BATCH = 10_000


Writer = Callable[[list[tuple[object, ...]]], Awaitable[None]]
# Opens the store: the stores (closed by the caller) and how to insert a batch of events.
Opener = Callable[[], Awaitable[tuple[Any, Writer]]]


def batch(first: int) -> list[tuple[object, ...]]:
    from bot.stores._rows import audit_params

    kinds = ("started", "paused", "answered", "completed")
    rows = []
    for n in range(first, first + BATCH):
        run = f"run-{n // 4:07d}"
        detail = {"comment": f"approved, change {n}", "args": {"replicas": n % 7}}
        event = AuditEvent(1.7e9 + n, kinds[n % 4], run, f"q-{n // 4}", "slack:T1:U1", detail)
        rows.append(audit_params(event))
    return rows


def measured(words: list[str], out: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of ``python -m bot WORDS > out``.

    The peak is the child's own ``VmHWM``, read from /proc while it runs (it only grows,
    and is gone once the child exits). Not ``wait4``'s ``ru_maxrss``: Linux carries the
    resident size of the process that forked the child across its exec into that figure,
    and this bench's own process holds what it wrote.
    """
    began = time.perf_counter()
    peak_kib = 0
    with out.open("w") as sink:
        child = subprocess.Popen(  # noqa: S603 - our own interpreter and words
            [sys.executable, "-m", "bot", *words], stdout=sink, env=env, cwd=ROOT
        )
        status = Path(f"/proc/{child.pid}/status")
        while child.poll() is None:
            try:
                lines = status.read_text().splitlines()
            except OSError:  # exited between the poll and the read
                break
            for line in lines:
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
            time.sleep(0.01)
        child.wait()
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(words)} exited {child.returncode}")
    return time.perf_counter() - began, peak_kib / 1024


@asynccontextmanager
async def sqlite_store(folder: Path) -> AsyncIterator[tuple[str, Opener]]:
    """A SQLite file in ``folder``: its URL and how to open it."""
    path = folder / "audit.sqlite3"

    async def opened() -> tuple[Any, Writer]:
        stores = await SqliteStores.open(path)

        async def write(rows: list[tuple[object, ...]]) -> None:
            # The store's own insert, which links each event into its chain.
            insert = stores._db.audit_insert
            await stores._db.run(lambda conn: conn.executemany(insert, rows))

        return stores, write

    yield f"sqlite:///{path}", opened


@asynccontextmanager
async def postgres_store() -> AsyncIterator[tuple[str, Opener] | None]:
    """A fresh schema on ``BENCH_POSTGRES_URL`` (``bench.cycle.postgres_schema``), dropped
    afterwards; None (saying so) without a server."""
    from bench.cycle import postgres_schema
    from bot.stores._audit_chain import INSERT_AUDIT
    from bot.stores._sql import numbered
    from bot.stores.postgres import PostgresStores

    async with postgres_schema() as url:
        if url is None:
            yield None
            return
        insert = numbered(INSERT_AUDIT)  # the trigger links each event

        async def opened() -> tuple[Any, Writer]:
            stores = await PostgresStores.open(url)

            async def write(rows: list[tuple[object, ...]]) -> None:
                await stores._db.transaction(lambda conn: conn.executemany(insert, rows))

            return stores, write

        yield url, opened


async def bench(name: str, url: str, opened: Opener, folder: Path, total: int) -> None:
    marks = sorted({min(100_000, total), total})
    key = checkpoint_keys([(KEY.split(":")[0], KEY.split(":")[1])])[0]
    env = {"PATH": os.environ.get("PATH", ""), "DATABASE_URL": url, "BOT_SIGNING_KEYS": KEY}
    print(f"{name}:")
    written, began = 0, time.perf_counter()
    for mark in marks:
        # Closed while measured (SQLite: its WAL folded into the file, as the bridge keeps it).
        stores, write = await opened()
        try:
            while written < mark:
                await write(batch(written))
                await stores.audit_chain.checkpoint(key, at=time.time())
                written += BATCH
        finally:
            await stores.close()
        took = time.perf_counter() - began
        print(f"{written:>9,} events written and linked in {took:.0f} s")
        export = folder / "audit.jsonl"
        seconds, rss = measured(["audit", "export"], export, env)
        size = export.stat().st_size / 2**20
        print(f"  audit export:  {seconds:6.1f} s, peak RSS {rss:6.1f} MiB ({size:.0f} MiB)")
        seconds, rss = measured(["audit", "verify", str(export)], folder / "verdict.txt", env)
        verdict = (folder / "verdict.txt").read_text().strip()
        print(f"  audit verify:  {seconds:6.1f} s, peak RSS {rss:6.1f} MiB: {verdict}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", nargs="?", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), action="append")
    args = parser.parse_args()
    backends = args.backend or ["sqlite", "postgres"]
    with tempfile.TemporaryDirectory() as folder:
        if "sqlite" in backends:
            async with sqlite_store(Path(folder)) as (url, opened):
                await bench("sqlite", url, opened, Path(folder), args.events)
        if "postgres" in backends:
            async with postgres_store() as found:
                if found is not None:
                    await bench("postgres", *found, Path(folder), args.events)


if __name__ == "__main__":
    asyncio.run(main())
