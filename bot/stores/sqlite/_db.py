"""Two SQLite connections to one file: one used inline on the event loop, one in a worker.

Why inline. A pause + redeem + resume cycle makes many small store calls,
and a WAL-mode transaction is cheaper than a hop to a thread and back, so
the hops would be most of the backend's cost. ``Database.run`` therefore
calls the transaction function directly on the loop thread, on the *inline*
connection. Like a memory-store call, an inline call has no suspension
point.

Why that cannot block the loop on a lock. The inline connection has a busy
timeout of 0: if another process (or our own worker connection) holds the
write lock, ``BEGIN IMMEDIATE`` fails at once with SQLITE_BUSY instead of
sleeping. A BUSY before any row was changed means the function's single
transaction was refused or rolled back and nothing happened, so ``run``
hands the same function to the *worker* connection, which lives in a
one-thread executor and may wait up to ``_BUSY_TIMEOUT_MS`` there. A BUSY
after a row changed is never retried; it propagates. Functions given to
``run`` must therefore be one transaction (or one statement) with no effects
outside the database. Readers in WAL mode do not wait for writers; the rare
BUSY a reader can meet (another process recovering the WAL) takes the same
fallback.

Why checkpoints are ours, and inline. With ``synchronous=NORMAL`` a WAL
commit does not fsync; checkpoints do, and so does the first commit after a
complete checkpoint, which restarts the WAL. SQLite's automatic checkpoint
fires inside whichever commit crosses its threshold, at an unpredictable
moment. Both connections set ``wal_autocheckpoint=0``; instead, every
``_CHECKPOINT_EVERY`` writes, ``run`` makes a PASSIVE checkpoint and the
restarting commit right there on the loop, on the inline connection (see
``_checkpoint``). Neither waits for a lock. In the worker a checkpoint would
be worse under load: calls from the loop would queue behind it (a commit
during it keeps the WAL from ever restarting), the queue would meet our own
worker connection's lock, and the fallbacks would cascade. Inline, the loop
pauses for the checkpoint's fsyncs instead; on a disk with slow fsyncs that
pause grows, which is the trade-off accepted. A write made while a platform
waits for its ack (``bot.stores.urgency.waited_on``) leaves the checkpoint
to the next write nobody waits on, unless a burst of acks has let the WAL
grow ``_CHECKPOINT_DEFERRAL`` times past the mark.

Durability is NORMAL's: commits are safe against a process crash, a power
loss may drop the last ones, and closing the last connection checkpoints
the whole WAL. Atomicity holds: each transaction is one sync function that
runs to its end on one connection. Inline it cannot interleave with anything
else on the loop (there is no await inside it); in the worker it runs whole
even if the awaiting task is cancelled. Other processes, and our two
connections with each other, are kept apart by ``BEGIN IMMEDIATE``.

Calls whose work grows with the table rather than with a ``limit`` go to the
worker directly (``run_in_worker``), so a large listing never stalls the
loop; so do opening and migrating, which may wait on other processes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from bot.audit import genesis, link
from bot.stores._audit_chain import INSERT_LINKED_AUDIT
from bot.stores._rows import Row
from bot.stores._sql import SQLITE
from bot.stores.errors import StoreError
from bot.stores.urgency import waited_on

T = TypeVar("T")
log = logging.getLogger(__name__)

_BUSY_TIMEOUT_MS = 5000
# Our writes dirty 2-5 pages each, so this keeps the WAL near SQLite's
# default autocheckpoint size (1000 pages).
_CHECKPOINT_EVERY = 250
# Writes a platform waits on (an ack) leave the checkpoint to the next write
# nobody waits on, unless a burst of them lets the WAL grow this many times over.
_CHECKPOINT_DEFERRAL = 4

_PRAGMAS = (
    # NORMAL is durable against process crashes in WAL mode; only a power
    # loss can drop the last commits, which FULL would cost an fsync each.
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
    # Checkpoints (and their fsyncs) are run by ``Database``, on the loop.
    "PRAGMA wal_autocheckpoint = 0",
)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    # The low byte is the primary code; extended codes (BUSY_RECOVERY...) share it.
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


# The audit's insert computes a chain's genesis for its first event only, but the few
# chains being written to are kept all the same.
_genesis = functools.lru_cache(maxsize=256)(genesis)


# A new file's page size, in bytes. Each commit writes every page it touched, whole, into
# the WAL, and each checkpoint fsyncs the WAL and copies the pages back: the bridge's rows
# are small (a question about half a kilobyte, its turn's state under one), so a commit
# of a few rows writes half the bytes in 2 KiB pages that it does in SQLite's default
# 4 KiB. A file that exists keeps the size it was made with (in WAL mode SQLite cannot
# change it), so this holds for files created from now on.
PAGE_SIZE = 2048


def _use_wal(conn: sqlite3.Connection) -> None:
    # Before the switch: on a file with no tables yet, it sets the size the file is made with.
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    conn.execute("PRAGMA journal_mode = WAL")


def _connect(path: str, *, busy_timeout_ms: int) -> sqlite3.Connection:
    # isolation_level=None: the sqlite3 module never opens transactions on its
    # own; ``transaction`` issues BEGIN IMMEDIATE / COMMIT itself.
    conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    try:
        conn.row_factory = sqlite3.Row
        # What the audit's trigger links each event with (migration 15); a connection
        # without them (another program) cannot write the audit at all.
        conn.create_function("audit_genesis", 1, _genesis, deterministic=True)
        conn.create_function("audit_link", 2, link, deterministic=True)
        for pragma in _PRAGMAS:
            conn.execute(pragma)
    except BaseException:
        conn.close()
        raise
    return conn


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the WAL into the database file, then restart the WAL from here.

    Run on the inline connection (busy timeout 0), so nothing here waits.
    After a complete checkpoint the next commit rewrites the WAL from its
    start and fsyncs the new header; rewriting one header field with its own
    value is the smallest commit that does that, now rather than in some
    later caller's commit.
    """
    # PASSIVE never waits; another process's checkpoint shows as busy.
    busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    if busy or frames <= 0 or copied < frames:
        return  # a reader or another checkpointer is in the way: try again later
    try:
        with transaction(conn):
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            conn.execute(f"PRAGMA user_version = {int(version)}")
    except sqlite3.OperationalError as error:
        if not _is_busy(error):
            raise
        # Another process is writing; the WAL restarts at a later checkpoint.


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT; ROLLBACK on any exception, which then propagates.

    A class rather than a generator-based context manager: every write
    passes through here, and the generator's machinery cost more than the
    BEGIN itself.
    """

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute("BEGIN IMMEDIATE")
        return self._conn

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        conn = self._conn
        if kind is None:
            try:
                conn.execute("COMMIT")
                return
            except BaseException:
                # A failed COMMIT must not leave the transaction open for the
                # next caller on this connection.
                _roll_back(conn)
                raise
        _roll_back(conn)


def _roll_back(conn: sqlite3.Connection) -> None:
    # Some errors (SQLITE_FULL, IOERR) already rolled back; a second ROLLBACK
    # would raise and hide the original error.
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def transaction(conn: sqlite3.Connection) -> _Transaction:
    """BEGIN IMMEDIATE ... COMMIT around a ``with`` block; ROLLBACK if it raises.

    IMMEDIATE takes the write lock up front, so two processes never both read
    a row and then race to write it; the loser waits (busy_timeout) instead,
    or, on the inline connection, fails at once and retries in the worker.
    """
    return _Transaction(conn)


class Database:
    """The inline connection, the worker connection and the worker's thread."""

    def __init__(
        self,
        executor: ThreadPoolExecutor,
        worker: sqlite3.Connection,
        inline: sqlite3.Connection,
    ) -> None:
        self._executor = executor
        self._worker = worker
        # None once closed; every call checks it first.
        self._inline: sqlite3.Connection | None = inline
        self._writes = 0
        # Write transactions committed through this object, for the benches.
        self.commits = 0
        # Each event linked by its own insert (``bench/cycle.py --audit`` writes the plain
        # one instead, to measure what the chain costs).
        self.audit_insert = INSERT_LINKED_AUDIT

    @classmethod
    async def open(cls, path: str | Path) -> Database:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-store")
        loop = asyncio.get_running_loop()
        try:
            # Created in the worker thread, so it is only ever used from there.
            worker = await loop.run_in_executor(
                executor, lambda: _connect(str(path), busy_timeout_ms=_BUSY_TIMEOUT_MS)
            )
        except BaseException:
            executor.shutdown(wait=False)
            raise
        try:
            await _switch_to_wal(loop, executor, worker)
            # Created on the loop thread and only ever used there; the sqlite3
            # module's same-thread check stays on to enforce it. Opening does
            # no locking: the pragmas are per connection, not in the file.
            inline = _connect(str(path), busy_timeout_ms=0)
        except BaseException:
            await loop.run_in_executor(executor, worker.close)
            executor.shutdown(wait=True)
            raise
        return cls(executor, worker, inline)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the loop thread, or in the worker if the lock is taken.

        ``fn`` must be one transaction or one statement with no other
        effects: it may be run a second time, in the worker, if its first run
        met a lock before changing any row.
        """
        conn = self._live()
        before = conn.total_changes
        try:
            result = fn(conn)
        except sqlite3.OperationalError as error:
            # total_changes counts rows changed even by a rolled-back
            # statement, so "unchanged" means nothing was written at all.
            if not _is_busy(error) or conn.total_changes != before:
                raise
            return await self.run_in_worker(fn)
        if conn.total_changes != before:
            self._wrote()
        return result

    # -- ``bot.stores._sql.Statements``: the shared ports' statements ------------

    dialect = SQLITE

    async def rows(self, sql: str, *args: Any) -> list[Row]:
        return await self.run(lambda conn: list(conn.execute(sql, args)))

    async def many_rows(self, sql: str, *args: Any) -> list[Row]:
        return await self.run_in_worker(lambda conn: list(conn.execute(sql, args)))

    async def write(self, sql: str, *args: Any) -> int:
        def write(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                return conn.execute(sql, args).rowcount

        return await self.run(write)

    async def in_order(self, statements: Sequence[tuple[str, tuple[Any, ...]]]) -> bool:
        def write(conn: sqlite3.Connection) -> bool:
            with transaction(conn):
                (sql, args), *rest = statements
                if not conn.execute(sql, args).rowcount:
                    return False
                for sql, args in rest:
                    conn.execute(sql, args)
                return True

        return await self.run(write)

    async def run_in_worker(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in the worker thread, where waiting for a lock is allowed."""
        self._live()

        def counted(conn: sqlite3.Connection) -> tuple[T, bool]:
            # Read in the worker: the connection refuses use from other threads.
            before = conn.total_changes
            return fn(conn), conn.total_changes != before

        loop = asyncio.get_running_loop()
        result, wrote = await loop.run_in_executor(self._executor, counted, self._worker)
        if wrote:
            self._wrote()
        return result

    async def close(self) -> None:
        """Close both connections and the thread; idempotent."""
        inline, self._inline = self._inline, None
        if inline is None:
            return
        try:
            # Not the file's last connection (the worker's is still open), so
            # this does no checkpoint and no fsync on the loop.
            inline.close()
            await asyncio.get_running_loop().run_in_executor(self._executor, self._worker.close)
        finally:
            # The close job has finished, so the thread is idle and exits at once.
            self._executor.shutdown(wait=True)

    def _live(self) -> sqlite3.Connection:
        if self._inline is None:
            raise StoreError("the SQLite store is closed; open it again before using it")
        return self._inline

    def _wrote(self) -> None:
        self.commits += 1
        self._writes += 1
        if self._writes < _CHECKPOINT_EVERY or self._inline is None:
            return
        if waited_on() and self._writes < _CHECKPOINT_EVERY * _CHECKPOINT_DEFERRAL:
            return
        self._writes = 0
        try:
            _checkpoint(self._inline)
        except sqlite3.Error:
            # Not fatal: the WAL grows until the next attempt succeeds, and
            # closing the last connection checkpoints it anyway.
            log.warning("SQLite checkpoint failed; retrying later", exc_info=True)


async def _switch_to_wal(
    loop: asyncio.AbstractEventLoop, executor: ThreadPoolExecutor, conn: sqlite3.Connection
) -> None:
    """Switch the file to WAL, retrying while another process holds the lock.

    Two processes switching a new file at once can deadlock on the lock
    upgrade, and SQLite then answers BUSY at once instead of calling the
    busy handler, so busy_timeout does not cover it. We back off and retry
    up to the same timeout, with asyncio.sleep so the loop keeps running.
    """
    deadline = loop.time() + _BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            return await loop.run_in_executor(executor, _use_wal, conn)
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or loop.time() >= deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)
