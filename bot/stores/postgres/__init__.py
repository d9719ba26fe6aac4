"""The PostgreSQL backend: every store port, shared by any number of replicas.

Selected by a ``postgresql://`` (or ``postgres://``) ``DATABASE_URL``. The
schema is the URL's ``search_path`` (``?search_path=bot``), else the
database's default. Semantics match ``bot.stores.sqlite`` method for
method; what differs is how races between processes are settled (row locks,
unique inserts, ``FOR UPDATE SKIP LOCKED``) and that every replica hears
of every change (``changes``, over LISTEN/NOTIFY).
"""

from bot.stores.postgres._changes import PostgresChanges
from bot.stores.postgres._stores import (
    DEFAULT_POOL_SIZE,
    DEFAULT_STATEMENT_TIMEOUT,
    PostgresStores,
)

__all__ = [
    "DEFAULT_POOL_SIZE",
    "DEFAULT_STATEMENT_TIMEOUT",
    "PostgresChanges",
    "PostgresStores",
]
