"""Installations (Slack OAuth) in PostgreSQL: one row per (platform, key), opaque text.

The adapter encrypts before it saves; this table never sees a token in clear.
"""

from __future__ import annotations

import time

from bot.stores.postgres._db import Database

_SAVE = (
    "INSERT INTO installations (platform, key, blob, updated_at) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (platform, key) DO UPDATE SET blob = excluded.blob,"
    " updated_at = excluded.updated_at"
)


class PostgresInstallations:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(self, platform: str, key: str, blob: str) -> None:
        await self._db.execute(_SAVE, platform, key, blob, time.time())

    async def find(self, platform: str, key: str) -> str | None:
        sql = "SELECT blob FROM installations WHERE platform = $1 AND key = $2"
        blob = await self._db.fetchval(sql, platform, key)
        return None if blob is None else str(blob)

    async def delete(self, platform: str, key: str) -> None:
        await self._db.execute(
            "DELETE FROM installations WHERE platform = $1 AND key = $2", platform, key
        )
