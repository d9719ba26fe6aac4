"""The store's settings: which backend ``DATABASE_URL`` names, and PostgreSQL's pool.

Checked at start so a wrong scheme is one line; the line never repeats
the URL, which may carry a password.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from pydantic import Field, field_validator

from bot.component_settings import ComponentSettings
from bot.stores.ports import Stores
from bot.stores.url import POSTGRES_SCHEMES, is_shared, open_stores


class StoreSettings(ComponentSettings):
    """Where runs and questions are kept; the pool applies to a postgresql:// URL only."""

    url: str = Field("sqlite:///var/bot.sqlite3", alias="DATABASE_URL")
    # Connections per replica, and how long one statement may run before the server cancels it.
    pg_pool_size: int = Field(10, alias="BOT_PG_POOL_SIZE", ge=1, le=200)
    pg_statement_timeout_seconds: float = Field(
        10.0, alias="BOT_PG_STATEMENT_TIMEOUT_SECONDS", gt=0, le=600
    )
    # Closed questions older than this lose their content (``bot/stores/_retention.py``);
    # unset: kept forever.
    retention_days: float | None = Field(None, alias="BOT_RETENTION_DAYS", gt=0)

    @field_validator("url")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if not value.startswith(("sqlite:///", *POSTGRES_SCHEMES)):
            # Never echo the value: a database URL may carry a password.
            raise ValueError(
                "use sqlite:///path/to/file.sqlite3, or postgresql://user:password@host/db "
                "(several replicas)"
            )
        return value

    @property
    def backend(self) -> str:
        """The URL's scheme alone (``sqlite``), safe to print."""
        return self.url.split("://")[0]

    @property
    def location(self) -> str:
        """Where the store is, safe to print: a SQLite file's absolute path, or PostgreSQL's
        host, port and database without the role or password."""
        prefix = "sqlite:///"
        if self.url.startswith(prefix):
            return f"SQLite file {Path(self.url[len(prefix) :]).resolve()}"
        parts = urlsplit(self.url)
        database = unquote(parts.path.lstrip("/")) or unquote(parts.username or "")
        try:
            port = parts.port or 5432
        except ValueError:  # not a number: the driver says so when it connects
            port = 5432
        return f"PostgreSQL {parts.hostname or 'localhost'}:{port}/{database}"

    @property
    def shared(self) -> bool:
        """Processes on several hosts may share this store (so they must share keys)."""
        return is_shared(self.url)

    async def open(self) -> Stores:
        return await open_stores(
            self.url,
            pool_size=self.pg_pool_size,
            statement_timeout=self.pg_statement_timeout_seconds,
        )
