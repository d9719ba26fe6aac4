"""Every port over one PostgreSQL database (and schema): the store for several replicas."""

from __future__ import annotations

from bot.stores._history import SqlHistory
from bot.stores._rekey import SqlRekey
from bot.stores._shared import SqlPorts
from bot.stores.ports import History
from bot.stores.postgres._admin import PostgresAdmin
from bot.stores.postgres._changes import PostgresChanges
from bot.stores.postgres._checkpoints import PostgresCheckpoints
from bot.stores.postgres._db import Database, connect_options
from bot.stores.postgres._durable import PostgresOutbox
from bot.stores.postgres._migrations import migrate
from bot.stores.postgres._unit import PostgresUnit

DEFAULT_POOL_SIZE = 10
DEFAULT_STATEMENT_TIMEOUT = 10.0
_PING_TIMEOUT_SECONDS = 5.0


class PostgresStores(SqlPorts):
    """Open with ``await PostgresStores.open(url)``; the schema is the URL's search_path."""

    def __init__(self, db: Database, changes: PostgresChanges) -> None:
        self._db = db
        parts = PostgresUnit(db), PostgresCheckpoints(db), PostgresOutbox(db), PostgresAdmin(db)
        super().__init__(db, *parts)
        self.history: History = SqlHistory(db)
        self.changes = changes

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
    ) -> PostgresStores:
        """Connect, migrate (under an advisory lock) and start listening for changes."""
        db = await Database.open(url, pool_size=pool_size, statement_timeout=statement_timeout)
        try:
            async with db.acquire() as conn:
                await migrate(conn)
                schema = str(await conn.fetchval("SELECT current_schema()"))
            # A data key that cannot open the rows is said now, before anything reads one.
            await SqlRekey(db).probe()
        except BaseException:
            await db.close()
            raise
        changes = PostgresChanges(
            url, schema=schema, options=connect_options(statement_timeout=statement_timeout)
        )
        changes.start()
        return cls(db, changes)

    async def ping(self) -> None:
        """One round trip on a pooled connection; raises if the database is unreachable."""
        await self._db.fetchval("SELECT 1", within=_PING_TIMEOUT_SECONDS)

    async def close(self) -> None:
        await self.changes.close()
        await self._db.close()
