"""``python -m bot audit export`` and ``verify`` over 100,000 and then 1,000,000 events.

Events are written as the bridge writes them (each linked by the store's
trigger), four per run, with a checkpoint signed after every 10,000, on a
SQLite file. Each command runs in a process of its own; its peak resident
memory is read from the kernel's accounting of that child (``wait4``), so
what is printed is the export's and the verifier's own.
Run: `.venv/bin/python bench/audit_export.py [events]` (default 1,000,000).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot.audit import checkpoint_keys
from bot.stores import AuditEvent, SqliteStores

ROOT = Path(__file__).resolve().parent.parent
KEY = "kbench:" + "b" * 48
BATCH = 10_000
INSERT = (
    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


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
    """Seconds and peak RSS (MiB) of ``python -m bot WORDS > out``."""
    began = time.perf_counter()
    with out.open("w") as sink:
        child = subprocess.Popen(  # noqa: S603 - our own interpreter and words
            [sys.executable, "-m", "bot", *words], stdout=sink, env=env, cwd=ROOT
        )
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(words)} exited {child.returncode}")
    return time.perf_counter() - began, usage.ru_maxrss / 1024


async def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    marks = sorted({min(100_000, total), total})
    key = checkpoint_keys([(KEY.split(":")[0], KEY.split(":")[1])])[0]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "audit.sqlite3"
        env = {
            "PATH": os.environ.get("PATH", ""),
            "DATABASE_URL": f"sqlite:///{path}",
            "BOT_SIGNING_KEYS": KEY,
        }
        written, began = 0, time.perf_counter()
        for mark in marks:
            # Closed while measured: its WAL folded into the file, as the bridge keeps it.
            stores = await SqliteStores.open(path)
            try:
                while written < mark:
                    rows = batch(written)
                    await stores._db.run(lambda conn, rows=rows: conn.executemany(INSERT, rows))
                    await stores.audit_chain.checkpoint(key, at=time.time())
                    written += BATCH
            finally:
                await stores.close()
            took = time.perf_counter() - began
            print(f"{written:>9,} events written and linked in {took:.0f} s")
            export = Path(folder) / "audit.jsonl"
            seconds, rss = measured(["audit", "export"], export, env)
            size = export.stat().st_size / 2**20
            print(f"  audit export:  {seconds:6.1f} s, peak RSS {rss:6.1f} MiB ({size:.0f} MiB)")
            seconds, rss = measured(
                ["audit", "verify", str(export)], Path(folder) / "verdict.txt", env
            )
            verdict = (Path(folder) / "verdict.txt").read_text().strip()
            print(f"  audit verify:  {seconds:6.1f} s, peak RSS {rss:6.1f} MiB: {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
