"""The store's settings: which backend ``DATABASE_URL`` names, and PostgreSQL's pool.

Checked at start so a wrong scheme is one line; the line never repeats
the URL, which may carry a password.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlsplit

from pydantic import Field, SecretStr, field_validator

from bot.component_settings import NOT_BLANK, ComponentSettings, Hidden, key_list_secrets
from bot.stores.data_keys import DataKeyError, DataKeys, parse_data_keys, use
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
    # The keyring content is encrypted with at rest (``bot/stores/data_keys.py``); unset:
    # plaintext, as before.
    data_keys: Annotated[SecretStr | None, NOT_BLANK, Hidden(key_list_secrets)] = Field(
        None, alias="BOT_DATA_KEYS"
    )

    @field_validator("data_keys")
    @classmethod
    def _keyring(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            try:
                parse_data_keys(value.get_secret_value())
            except DataKeyError as error:
                raise ValueError(str(error)) from None
        return value

    @property
    def keyring(self) -> DataKeys | None:
        """The parsed keyring; None without BOT_DATA_KEYS."""
        if self.data_keys is None:
            return None
        return parse_data_keys(self.data_keys.get_secret_value())

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
        """The store, its content sealed under ``keyring`` in this process; a keyring that
        cannot open the store's rows is DataKeyError, one sentence, as it opens."""
        use(self.keyring)
        return await open_stores(
            self.url,
            pool_size=self.pg_pool_size,
            statement_timeout=self.pg_statement_timeout_seconds,
        )
