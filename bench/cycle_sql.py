"""SQLite's own share of one pause + redeem + resume cycle: its SQL, replayed alone.

Runs ``bench/cycle.py``'s cycle a few times on a real SQLite file, records
every statement the store executed for one cycle (text and parameters, in
order), then replays that list on the same file for fresh ids, with no
Python around it but the loop. Its median is a floor: no code around the
store can make the SQLite cycle cheaper than its own SQL. The whole SQLite
cycle is printed beside it, measured in the same run.
Run: `make bench` or `.venv/bin/python bench/cycle_sql.py [iterations]`.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import cycle

Statement = tuple[str, tuple[Any, ...]]
_IDS = re.compile(r"\b(?:run|int|call)_[0-9a-f]{8,}")


class _Recording(sqlite3.Connection):
    """A connection that appends what it executes to ``executed``."""

    executed: ClassVar[list[Statement]] = []

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.executed.append((sql, tuple(parameters)))
        return super().execute(sql, parameters)


@contextmanager
def recording() -> Iterator[list[Statement]]:
    """Every SQLite connection opened meanwhile records what it executes."""
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return real_connect(*args, factory=_Recording, **kwargs)

    _Recording.executed = []
    with mock.patch.object(sqlite3, "connect", connect):
        yield _Recording.executed


def last_cycle(executed: list[Statement]) -> list[Statement]:
    """The statements from the last run's creation (its BEGIN) to the end."""
    created = max(i for i, (sql, _) in enumerate(executed) if sql.startswith("INSERT INTO runs"))
    return executed[created - 1 :]


def renamed(statements: list[Statement], suffix: str) -> list[Statement]:
    """The same statements for new runs, questions and calls."""

    def rename(value: Any) -> Any:
        return _IDS.sub(lambda m: m.group(0) + suffix, value) if isinstance(value, str) else value

    return [(sql, tuple(rename(v) for v in params)) for sql, params in statements]


def replay(path: Path, statements: list[Statement], iterations: int) -> list[float]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    samples: list[float] = []
    try:
        for i in range(iterations):
            batch = renamed(statements, f"x{i}")
            began = time.perf_counter()
            for sql, params in batch:
                conn.execute(sql, params).fetchall()
            samples.append((time.perf_counter() - began) * 1e6)
            if i % 25 == 24:  # the store checkpoints every 250 writes, ~25 cycles
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        conn.close()
    return samples


async def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as folder:
        whole = await cycle.measure(f"sqlite:///{Path(folder) / 'whole.sqlite3'}", iterations)
        path = Path(folder) / "bench.sqlite3"
        with recording() as executed:
            await cycle.measure(f"sqlite:///{path}", 1, warmup=3)
        one = last_cycle(executed)
        sql_alone = replay(path, one, iterations)
    transactions = sum(1 for sql, _ in one if sql == "BEGIN IMMEDIATE")
    print(f"one cycle's SQL: {len(one)} statements in {transactions} write transactions")
    sql_median, _ = cycle.summary("sql only", sql_alone)
    whole_median, _ = cycle.summary("sqlite", whole)
    print(f"the SQL alone is {sql_median / whole_median:.0%} of the SQLite cycle's median")


if __name__ == "__main__":
    asyncio.run(main())
