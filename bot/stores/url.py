"""Pick a store backend from DATABASE_URL."""

from __future__ import annotations

from bot.stores.errors import StoreError
from bot.stores.memory import MemoryStores
from bot.stores.ports import Stores
from bot.stores.sqlite import SqliteStores

_SQLITE_PREFIX = "sqlite:///"

ACCEPTED = (
    "memory:// (tests only: nothing survives a restart), "
    "sqlite:///relative/path.sqlite3 or sqlite:////absolute/path.sqlite3"
)


async def open_stores(url: str) -> Stores:
    """Open the backend ``url`` names; StoreError says what is accepted otherwise."""
    if url == "memory://":
        return MemoryStores()
    if url.startswith(_SQLITE_PREFIX) and url[len(_SQLITE_PREFIX) :].strip():
        # Three slashes then the path: a fourth slash makes it absolute.
        return await SqliteStores.open(url[len(_SQLITE_PREFIX) :])
    # Name only the scheme: a postgresql:// URL may carry a password.
    scheme = url.split("://", 1)[0] + "://" if "://" in url else repr(url)
    raise StoreError(f"DATABASE_URL {scheme} is not supported; use {ACCEPTED}")
