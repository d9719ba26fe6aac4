"""Errors the stores raise on purpose, and telling a store's outage from a bug."""

from __future__ import annotations

import sqlite3
import sys

from bot.errors import BotError


class StoreError(BotError):
    """A store cannot be opened or used as configured; the message says what to change."""


# SQLite's primary codes for "not now": locked, busy, out of disk or I/O trouble.
_SQLITE_OUTAGE = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
    }
)


def _postgres_outages() -> tuple[type[BaseException], ...]:
    # asyncpg is imported only by the PostgreSQL store: without it loaded, no error is its.
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is None:
        return ()
    return (
        asyncpg.PostgresConnectionError,
        asyncpg.InterfaceError,
        asyncpg.CannotConnectNowError,
        asyncpg.QueryCanceledError,
    )


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says the store is unreachable for now, rather than that a step failed.

    A run whose step met an outage is not failed: its lease is released and
    recovery drives it again once the store answers.
    """
    if isinstance(error, sqlite3.OperationalError):
        return (getattr(error, "sqlite_errorcode", 0) & 0xFF) in _SQLITE_OUTAGE
    return isinstance(error, (ConnectionError, TimeoutError, *_postgres_outages()))
