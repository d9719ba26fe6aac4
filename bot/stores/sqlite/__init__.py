"""The SQLite backend: one file, shared safely by the processes of one host."""

from bot.stores.sqlite._migrations import MIGRATIONS, Migration
from bot.stores.sqlite._stores import SqliteStores

__all__ = [
    "MIGRATIONS",
    "Migration",
    "SqliteStores",
]
