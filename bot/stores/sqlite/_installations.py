"""Installations in the bot's SQLite file: one row per (platform, key), opaque text."""

from __future__ import annotations

import sqlite3
import time

from bot.stores.sqlite._db import Database


class SqliteInstallations:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(self, platform: str, key: str, blob: str) -> None:
        def save(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO installations (platform, key, blob, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (platform, key) DO UPDATE SET blob = excluded.blob,"
                " updated_at = excluded.updated_at",
                (platform, key, blob, time.time()),
            )

        await self._db.run(save)

    async def find(self, platform: str, key: str) -> str | None:
        def find(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT blob FROM installations WHERE platform = ? AND key = ?", (platform, key)
            ).fetchone()
            return None if row is None else str(row[0])

        return await self._db.run(find)

    async def delete(self, platform: str, key: str) -> None:
        await self._db.run(
            lambda conn: conn.execute(
                "DELETE FROM installations WHERE platform = ? AND key = ?", (platform, key)
            )
        )
