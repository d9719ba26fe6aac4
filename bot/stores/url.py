"""Pick a store backend from DATABASE_URL."""

from __future__ import annotations

import sys

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
        return await SqliteStores.open(url[len(_SQLITE_PREFIX) :])
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
        from bot.stores.postgres._stores import DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT

        return await PostgresStores.open(
            url,
            pool_size=pool_size or DEFAULT_POOL_SIZE,
            statement_timeout=statement_timeout or DEFAULT_STATEMENT_TIMEOUT,
        )
    # Name only the scheme: a postgresql:// URL may carry a password.
    scheme = url.split("://", 1)[0] + "://" if "://" in url else repr(url)
    raise StoreError(f"DATABASE_URL {scheme} is not supported; use {ACCEPTED}")
