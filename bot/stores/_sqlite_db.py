"""One SQLite connection, driven from asyncio through a single worker thread.

Hand-written rather than aiosqlite: aiosqlite hops to its thread once per
statement, so a transaction of several statements costs several hops and
leaves the event loop interleaving other work between BEGIN and COMMIT.
Here a whole transaction is one sync function run by ``Database.run``: one
thread hop per transaction, and the statements inside it cannot interleave
with any other transaction of this process because the executor has exactly
one thread. Other processes are kept out by ``BEGIN IMMEDIATE`` and waited
for by ``busy_timeout``.

If the awaiting task is cancelled, the function still runs to its end in the
worker thread, so a transaction is either committed or rolled back, never
left half-done.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from bot.stores.errors import StoreError

T = TypeVar("T")

_BUSY_TIMEOUT_MS = 5000

_PRAGMAS = (
    f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}",
    # NORMAL is durable against process crashes in WAL mode; only a power
    # loss can drop the last commits, which FULL would cost an fsync each.
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    # The low byte is the primary code; extended codes (BUSY_RECOVERY...) share it.
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _use_wal(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode = WAL")


def _connect(path: str) -> sqlite3.Connection:
    # isolation_level=None: the sqlite3 module never opens transactions on its
    # own; ``transaction`` issues BEGIN IMMEDIATE / COMMIT itself.
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in _PRAGMAS:
            conn.execute(pragma)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool = True) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT; ROLLBACK on any exception, which then propagates.

    IMMEDIATE takes the write lock up front, so two processes never both read
    a row and then race to write it; the loser waits (busy_timeout) instead.
    ``write=False`` opens a plain (deferred) transaction: one consistent
    snapshot for several SELECTs without blocking other processes' writers.
    """
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield conn
        # Inside the try: a failed COMMIT must not leave the transaction open
        # for the next caller on this connection.
        conn.execute("COMMIT")
    except BaseException:
        # Some errors (SQLITE_FULL, IOERR) already rolled back; a second
        # ROLLBACK would raise and hide the original error.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class Database:
    """A connection owned by one worker thread; ``run`` executes sync code there."""

    def __init__(self, executor: ThreadPoolExecutor, conn: sqlite3.Connection) -> None:
        self._executor = executor
        self._conn: sqlite3.Connection | None = conn

    @classmethod
    async def open(cls, path: str | Path) -> Database:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-store")
        loop = asyncio.get_running_loop()
        try:
            # Created in the worker thread, so it is only ever used from there.
            conn = await loop.run_in_executor(executor, _connect, str(path))
        except BaseException:
            executor.shutdown(wait=False)
            raise
        db = cls(executor, conn)
        try:
            await db._use_wal()
        except BaseException:
            await db.close()
            raise
        return db

    async def _use_wal(self) -> None:
        """Switch the file to WAL, retrying while another process holds the lock.

        Two processes switching a new file at once can deadlock on the lock
        upgrade, and SQLite then answers BUSY at once instead of calling the
        busy handler, so busy_timeout does not cover it. We back off and retry
        up to the same timeout, with asyncio.sleep so the loop keeps running.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _BUSY_TIMEOUT_MS / 1000
        delay = 0.005
        while True:
            try:
                return await self.run(_use_wal)
            except sqlite3.OperationalError as error:
                if not _is_busy(error) or loop.time() >= deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in the connection's thread; one call = one hop."""
        conn = self._conn
        if conn is None:
            raise StoreError("the SQLite store is closed; open it again before using it")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, conn)

    async def close(self) -> None:
        """Close the connection in its thread and stop the thread; idempotent."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, conn.close)
        finally:
            # The close job has finished, so the thread is idle and exits at once.
            self._executor.shutdown(wait=True)
