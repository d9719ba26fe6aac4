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

from bot.kernel.journal import Journal
from bot.questions.write import UnitOfWork
from bot.stores.ports import (
    AdminStore,
    Audit,
    Checkpoints,
    Installations,
    Leases,
    Ledger,
    Outbox,
    Runs,
)
from bot.stores.sqlite._admin import SqliteAdmin
from bot.stores.sqlite._db import Database
from bot.stores.sqlite._durable import (
    SqliteJournal,
    SqliteLeases,
    SqliteOutbox,
)
from bot.stores.sqlite._installations import SqliteInstallations
from bot.stores.sqlite._ledger import SqliteLedger
from bot.stores.sqlite._migrations import migrate
from bot.stores.sqlite._runs import SqliteAudit, SqliteCheckpoints, SqliteRuns
from bot.stores.sqlite._unit import SqliteUnit


class SqliteStores:
    """Every port over one SQLite file; open with ``await SqliteStores.open(path)``."""

    def __init__(self, db: Database) -> None:
        self._db = db
        # Typed as the ports: ``Stores`` declares plain (mutable, so invariant)
        # attributes, which the concrete classes would not match.
        unit = SqliteUnit(db)
        self.unit: UnitOfWork = unit
        self.ledger: Ledger = SqliteLedger(db, unit)
        self.checkpoints: Checkpoints = SqliteCheckpoints(db)
        self.runs: Runs = SqliteRuns(db)
        self.audit: Audit = SqliteAudit(db)
        self.leases: Leases = SqliteLeases(db)
        self.journal: Journal = SqliteJournal(db)
        self.outbox: Outbox = SqliteOutbox(db)
        self.installations: Installations = SqliteInstallations(db)
        self.admin: AdminStore = SqliteAdmin(db)

    @classmethod
    async def open(cls, path: str | Path) -> SqliteStores:
        """Open (creating it and its folders if needed) and migrate the file at ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await Database.open(path)
        try:
            # In the worker: it may wait for another process migrating the same file.
            await db.run_in_worker(lambda conn: migrate(conn, str(path)))
        except BaseException:
            await db.close()
            raise
        return cls(db)

    async def ping(self) -> None:
        await self._db.run(lambda conn: conn.execute("SELECT 1").fetchone())

    async def close(self) -> None:
        await self._db.close()
