"""Durable stores in one SQLite file, shared safely by several processes.

Every port method is one sync function run as one transaction (or one
statement) by ``_db.Database``: inline on the event loop when the
lock is free, else in its worker thread. Row mapping lives in
``_rows``; the lifecycle's writes in ``_unit``. Lists come
back in insertion order, and an update of an unknown id raises KeyError.
JSON columns hold dicts; a value that is not JSON-serialisable is refused
with TypeError when written rather than corrupting the row.
"""

from __future__ import annotations

from pathlib import Path

from bot.stores._history import SqlHistory
from bot.stores._rekey import SqlRekey
from bot.stores._shared import SqlPorts
from bot.stores.ports import History
from bot.stores.sqlite._admin import SqliteAdmin
from bot.stores.sqlite._checkpoints import SqliteCheckpoints
from bot.stores.sqlite._db import Database
from bot.stores.sqlite._durable import SqliteOutbox
from bot.stores.sqlite._migrations import migrate
from bot.stores.sqlite._unit import SqliteUnit


class SqliteStores(SqlPorts):
    """Every port over one SQLite file; open with ``await SqliteStores.open(path)``."""

    def __init__(self, db: Database) -> None:
        self._db = db
        parts = SqliteUnit(db), SqliteCheckpoints(db), SqliteOutbox(db), SqliteAdmin(db)
        super().__init__(db, *parts)
        self.history: History = SqlHistory(db)

    @classmethod
    async def open(cls, path: str | Path) -> SqliteStores:
        """Open (creating it and its folders if needed) and migrate the file at ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await Database.open(path)
        try:
            # In the worker: it may wait for another process migrating the same file.
            await db.run_in_worker(lambda conn: migrate(conn, str(path)))
            # A data key that cannot open the rows is said now, before anything reads one.
            await SqlRekey(db).probe()
        except BaseException:
            await db.close()
            raise
        return cls(db)

    async def ping(self) -> None:
        await self._db.run(lambda conn: conn.execute("SELECT 1").fetchone())

    async def close(self) -> None:
        await self._db.close()
