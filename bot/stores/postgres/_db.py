"""The connection pool, and one rule for running a transaction on it.

Every port method is one ``Database.transaction`` (or one statement through
``Database.fetch*``). A transaction that PostgreSQL aborts as a deadlock
victim or a serialization failure changed nothing, so it is run again, a
few times; any other error propagates (the redeem path turns it into "try
again in a moment", with the token unspent because nothing committed).

A lost connection needs nothing of ours: asyncpg's pool drops a connection
it finds closed and dials a new one on the next acquire, so once the
database is back the next call simply works.

Timeouts, so no caller waits forever on a stuck server: ``statement_timeout``
is set on every pooled connection (the server cancels a statement that
runs too long), ``idle_in_transaction_session_timeout`` frees locks a stuck
client would hold, and asyncpg's ``command_timeout`` bounds the wait on the
client side too (a partitioned network never answers at all).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, TypeAlias, TypeVar
from urllib.parse import unquote, urlsplit

import asyncpg

from bot.stores._audit_chain import INSERT_AUDIT
from bot.stores._rows import Row
from bot.stores._sql import POSTGRES, numbered
from bot.stores.errors import StoreError

T = TypeVar("T")
# What a transaction function is handed: a pooled connection (or, migrating, a plain one).
Conn: TypeAlias = (
    "asyncpg.Connection[asyncpg.Record] | asyncpg.pool.PoolConnectionProxy[asyncpg.Record]"
)
# A connection the pool lent.
_Pooled: TypeAlias = "asyncpg.pool.PoolConnectionProxy[asyncpg.Record]"
log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5.0
_RETRIES = 5
# Deadlock victims and serialization failures roll back wholly: safe to retry.
_RETRYABLE = (asyncpg.exceptions.DeadlockDetectedError, asyncpg.exceptions.SerializationError)


def connect_options(*, statement_timeout: float) -> dict[str, Any]:
    """The settings every connection of ours (pooled or listening) is opened with."""
    return {
        "timeout": CONNECT_TIMEOUT_SECONDS,
        # A client-side bound a little above the server's, which fires first.
        "command_timeout": statement_timeout + 5.0,
        "server_settings": {
            "application_name": "chatops-bot",
            "statement_timeout": str(int(statement_timeout * 1000)),
            "idle_in_transaction_session_timeout": str(int((statement_timeout + 5.0) * 1000)),
        },
    }


async def _keep_session(conn: Conn) -> None:
    """Nothing to reset when a connection goes back to the pool.

    asyncpg's default reset is one more round trip per call (advisory
    unlocks, CLOSE ALL, UNLISTEN, RESET ALL). Pooled connections of ours take
    only transaction-scoped locks, never LISTEN (``_changes`` has its own
    connection), never SET, and open no cursors; a transaction left open is
    still rolled back by asyncpg before this is called.
    """
    del conn


class RoundTrips:
    """Every query sent on the pool's connections, BEGIN and COMMIT included (benches read it)."""

    def __init__(self) -> None:
        self.count = 0

    def _sent(self, query: Any) -> None:
        del query
        self.count += 1

    async def attach(self, conn: Conn) -> None:
        conn.add_query_logger(self._sent)


class _Kept:
    """A pool, and the one connection kept out of it from one call to the next.

    asyncpg's acquire and release are several coroutines, a task and two
    timers each, and most of our calls are one statement, so in our process
    they cost about as much as the statement. The connection a call ends with
    is kept for the next call instead; a call made while it is in use takes
    one from the pool, as before. A connection a call leaves in any unusual
    state (an error, a cancel, an open transaction, a closed socket) goes back
    to the pool, which resets, closes or re-dials it as it always did; so does
    every connection while a call waits for the pool, which may be full.
    """

    __slots__ = ("_closing", "_conn", "_waiting", "pool")

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._conn: _Pooled | None = None
        # Calls waiting in the pool's acquire.
        self._waiting = 0
        # Set by ``close``: from then on every connection goes back, so the pool can close.
        self._closing = False

    def lease(self, wait: float | None = None) -> _Lease:
        """``wait`` bounds the wait for a connection from the pool."""
        return _Lease(self, wait)

    async def take(self, wait: float | None) -> _Pooled:
        conn, self._conn = self._conn, None
        if conn is not None:
            if not conn.is_closed():
                return conn
            await self.pool.release(conn)  # the pool dials a new one on the next acquire
        self._waiting += 1
        try:
            return await self.pool.acquire(timeout=wait)
        finally:
            self._waiting -= 1

    async def give(self, conn: _Pooled, *, failed: bool) -> None:
        if self._closing:
            # A call that outlived ``close``: its connection is the pool's to close.
            with contextlib.suppress(asyncpg.InterfaceError):  # the pool closed meanwhile
                await self.pool.release(conn)
            return
        if (
            failed
            or self._waiting
            or self._conn is not None
            or conn.is_closed()
            or conn.is_in_transaction()
        ):
            await self.pool.release(conn)
        else:
            self._conn = conn

    async def close(self) -> None:
        # Bounded: a connection a cancelled caller left busy must not hold shutdown.
        self._closing = True
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                await self.pool.release(conn)
            await asyncio.wait_for(self.pool.close(), timeout=5.0)
        except TimeoutError:
            self.pool.terminate()


class _Lease:
    """``async with``: a connection from ``_Kept`` for one call, handed back after it."""

    __slots__ = ("_conn", "_kept", "_wait")

    def __init__(self, kept: _Kept, wait: float | None) -> None:
        self._kept = kept
        self._wait = wait

    async def __aenter__(self) -> _Pooled:
        self._conn = await self._kept.take(self._wait)
        return self._conn

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self._kept.give(self._conn, failed=kind is not None)


# The marks' connection (``Database.bookkeep``): commits that wait for no WAL flush; one
# plan per statement, kept, and made of index lookups whatever the tables' size.
_MARKS_SETTINGS = {
    "synchronous_commit": "off",
    "plan_cache_mode": "force_generic_plan",
    "enable_seqscan": "off",
    "enable_hashjoin": "off",
    "enable_mergejoin": "off",
}


class Database:
    """A pool of connections to one database (and schema, by the URL's search_path)."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        round_trips: RoundTrips | None = None,
        *,
        bookkeeping: asyncpg.Pool | None = None,
    ) -> None:
        self._pool = _Kept(pool)
        self.round_trips = round_trips or RoundTrips()
        # One connection whose commits do not wait for the WAL flush (see ``bookkeep``).
        self._bookkeeping = self._pool if bookkeeping is None else _Kept(bookkeeping)

    @classmethod
    async def open(cls, url: str, *, pool_size: int, statement_timeout: float) -> Database:
        round_trips = RoundTrips()
        options = connect_options(statement_timeout=statement_timeout)
        # Marks: commits that wait for no WAL flush, and one plan per statement that
        # reads by key (see ``bookkeep``).
        unflushed = {**options["server_settings"], **_MARKS_SETTINGS}
        try:
            pool = await asyncpg.create_pool(
                url,
                min_size=1,
                max_size=max(pool_size, 1),
                init=round_trips.attach,
                reset=_keep_session,
                **options,
            )
            try:
                bookkeeping = await asyncpg.create_pool(
                    url,
                    min_size=1,
                    max_size=1,
                    init=round_trips.attach,
                    reset=_keep_session,
                    **{**options, "server_settings": unflushed},
                )
            except BaseException:
                await pool.close()
                raise
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as error:
            raise StoreError(_cannot_connect(error, url)) from None
        return cls(pool, round_trips, bookkeeping=bookkeeping)

    async def transaction(self, fn: Callable[[Conn], Awaitable[T]]) -> T:
        """``await fn(conn)`` in one transaction (READ COMMITTED), retried if PostgreSQL
        aborted it as a deadlock victim or a serialization failure."""
        for attempt in range(_RETRIES):
            try:
                async with self._pool.lease() as conn, conn.transaction():
                    return await fn(conn)
            except _RETRYABLE:
                if attempt == _RETRIES - 1:
                    raise
                log.info("transaction aborted by PostgreSQL as a conflict; retrying")
                await asyncio.sleep(0.005 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def bookkeep(self, sql: str, *args: Any) -> str:
        """One statement whose commit does not wait for the WAL to reach the disk.

        For marks whose loss costs a repeat, never a loss: a delivered mark that a
        crash of the PostgreSQL server itself (not of ours) drops within its WAL
        writer's delay leaves the row pending, and it is delivered again, as a
        delivery already is after a crash of ours. Visible to every session at once.

        Planned once per statement, and by key: a mark joins the outbox and the
        questions to lists of ids. The plan is kept (a generic plan), so a mark
        costs no planning, and the connection allows no sequential scan, hash
        join or merge join, so that plan is index lookups in nested loops
        whatever the tables held when it was made. Left to their statistics, a
        plan made while the tables were small (or had none yet) scans them whole
        and is kept until an ANALYZE: each mark would cost more the more rows
        there are.

        Retried as ``transaction`` is if PostgreSQL aborted it as a deadlock victim: marks
        that record their posts' events move those runs' chain heads, which the runs' own
        steps move too, and a mark lost to an abort would cost a second post.
        """
        for attempt in range(_RETRIES):
            try:
                async with self._bookkeeping.lease() as conn:
                    return str(await conn.execute(sql, *args))
            except _RETRYABLE:
                if attempt == _RETRIES - 1:
                    raise
                log.info("a deliverer's marks aborted by PostgreSQL as a conflict; retrying")
                await asyncio.sleep(0.005 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def execute(self, sql: str, *args: Any) -> str:
        async with self._pool.lease() as conn:
            return str(await conn.execute(sql, *args))

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        async with self._pool.lease() as conn:
            return list(await conn.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> asyncpg.Record | None:
        async with self._pool.lease() as conn:
            return await conn.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any, within: float | None = None) -> Any:
        """One value; ``within`` bounds the wait for a connection and for the answer."""
        async with self._pool.lease(within) as conn:
            return await conn.fetchval(sql, *args, timeout=within)

    # -- ``bot.stores._sql.Statements``: the shared ports' statements ------------

    dialect = POSTGRES
    audit_insert = INSERT_AUDIT  # the trigger links it (migration 15)

    async def rows(self, sql: str, *args: Any) -> list[Row]:
        return list(await self.fetch(numbered(sql), *args))

    async def many_rows(self, sql: str, *args: Any) -> list[Row]:
        return await self.rows(sql, *args)

    async def write(self, sql: str, *args: Any) -> int:
        return changed(await self.execute(numbered(sql), *args))

    async def in_order(self, statements: Sequence[tuple[str, tuple[Any, ...]]]) -> bool:
        async def write(conn: Conn) -> bool:
            (sql, args), *rest = statements
            if not changed(await conn.execute(numbered(sql), *args)):
                return False
            for sql, args in rest:
                await conn.execute(numbered(sql), *args)
            return True

        return await self.transaction(write)

    def acquire(self) -> _Lease:
        """A pooled connection for a caller that needs several transactions on one session."""
        return self._pool.lease()

    async def close(self) -> None:
        for kept in {self._pool, self._bookkeeping}:
            await kept.close()


def changed(status: str) -> int:
    """Rows changed, from a command tag such as ``UPDATE 1`` or ``INSERT 0 1``."""
    return int(status.rsplit(" ", 1)[-1]) if status[-1:].isdigit() else 0


def _cannot_connect(error: BaseException, url: str) -> str:
    """What to do about a refused connection, in one sentence.

    The URL may carry a password: the sentence names the database at most,
    never the URL or the role's secret.
    """
    if isinstance(error, asyncpg.InvalidCatalogNameError):
        # The path names the database; without one PostgreSQL takes the user's name.
        parts = urlsplit(url)
        name = unquote(parts.path.lstrip("/")) or unquote(parts.username or "") or "postgres"
        return (
            f"PostgreSQL has no database {name!r}: create it (createdb {name}, or "
            f'CREATE DATABASE "{name}"; in psql), or name another one in DATABASE_URL'
        )
    if isinstance(error, asyncpg.InvalidAuthorizationSpecificationError):
        # Also InvalidPasswordError: a missing role and a wrong password read alike.
        return (
            "PostgreSQL refused the role or password in DATABASE_URL: check the user name "
            "and password (or create the role: createuser NAME)"
        )
    if isinstance(error, socket.gaierror):
        # A name the resolver does not know: almost always a typo in the host.
        host = urlsplit(url).hostname or "localhost"
        return (
            f"the PostgreSQL host {host!r} in DATABASE_URL does not resolve: check its "
            "spelling (or that this machine's DNS knows it)"
        )
    if isinstance(error, ConnectionRefusedError):
        parts = urlsplit(url)
        where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
        return (
            f"nothing answers for PostgreSQL at {where}: start the server, or fix the "
            "host and port in DATABASE_URL"
        )
    return (
        f"cannot connect to PostgreSQL ({type(error).__name__}); check DATABASE_URL "
        "and that the server is up"
    )
