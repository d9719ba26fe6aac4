"""Pick a store backend from DATABASE_URL."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from bot.stores.errors import StoreError
from bot.stores.ports import Stores
from bot.stores.sqlite import SqliteStores

_SQLITE_PREFIX = "sqlite:///"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

ACCEPTED = (
    "sqlite:///relative/path.sqlite3 or sqlite:////absolute/path.sqlite3, "
    "postgresql://user:password@host:5432/database (several replicas)"
)


def is_shared(url: str) -> bool:
    """Whether processes on several hosts may share this store (so they must share keys)."""
    return url.startswith(POSTGRES_SCHEMES)


async def open_stores(
    url: str, *, pool_size: int | None = None, statement_timeout: float | None = None
) -> Stores:
    """Open the backend ``url`` names; StoreError says what is accepted otherwise.

    ``pool_size`` and ``statement_timeout`` (seconds) apply to PostgreSQL only.
    """
    if url == "memory://":
        # Gone: a store that forgets every question at a restart is no store.
        raise StoreError(
            "DATABASE_URL=memory:// is no longer supported; use sqlite:///path/bot.sqlite3 "
            "(tests use one on a temporary file)"
        )
    if url.startswith(_SQLITE_PREFIX) and url[len(_SQLITE_PREFIX) :].strip():
        # Three slashes then the path: a fourth slash makes it absolute.
        path = url[len(_SQLITE_PREFIX) :]
        try:
            return await SqliteStores.open(path)
        except sqlite3.OperationalError as error:
            # Only "cannot open": a busy or locked file is the caller's to retry.
            if (getattr(error, "sqlite_errorcode", 0) & 0xFF) != sqlite3.SQLITE_CANTOPEN:
                raise
            raise StoreError(_unusable_sqlite(path, error)) from None
        except OSError as error:
            raise StoreError(_unusable_sqlite(path, error)) from None
    if is_shared(url):
        # Imported here: a deployment without PostgreSQL never loads the driver.
        try:
            from bot.stores.postgres import PostgresStores
        except ModuleNotFoundError as missing:
            raise StoreError(
                f"DATABASE_URL names PostgreSQL, but this Python ({sys.executable}) lacks "
                f"{missing.name}; use .venv/bin/python (`make run` creates it) or "
                "pip install asyncpg"
            ) from None
        from bot.stores.postgres import DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT

        return await PostgresStores.open(
            url,
            pool_size=pool_size or DEFAULT_POOL_SIZE,
            statement_timeout=statement_timeout or DEFAULT_STATEMENT_TIMEOUT,
        )
    # Name only the scheme: a postgresql:// URL may carry a password.
    scheme = url.split("://", 1)[0] + "://" if "://" in url else repr(url)
    raise StoreError(f"DATABASE_URL {scheme} is not supported; use {ACCEPTED}")


def _unusable_sqlite(path: str, error: Exception) -> str:
    """One line for a SQLite file that cannot be opened: a folder, or a place not writable."""
    if Path(path).is_dir():
        example = Path(path) / "bot.sqlite3"
        return f"DATABASE_URL: {path} is a folder; name a file in it, e.g. sqlite:///{example}"
    detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return (
        f"DATABASE_URL: the SQLite file {path} cannot be opened or created ({detail}); "
        "point it at a file in a writable folder"
    )
