"""Settings from the environment (and `.env`), validated once at start.

A bad value is reported as one line naming the variable and what to set,
never as a traceback; ``SettingsError`` carries those lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.errors import BotError

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class SettingsError(BotError):
    """Configuration is unusable; ``lines`` say which variable and what to set."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _csv(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class Settings(BaseSettings):
    """Every knob the bot reads; names are the environment variables."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, frozen=True
    )

    port: int = Field(3978, alias="PORT", ge=1, le=65535)
    host: str = Field("127.0.0.1", alias="BOT_HOST")
    database_url: str = Field("sqlite:///var/bot.sqlite3", alias="DATABASE_URL")
    data_dir: Path = Field(Path("var"), alias="BOT_DATA_DIR")
    signing_keys: SecretStr | None = Field(None, alias="BOT_SIGNING_KEYS")
    agent: str | None = Field(None, alias="BOT_AGENT", pattern=r"^[\w.]+:\w+$")
    console: bool = Field(True, alias="BOT_CONSOLE")
    console_password: SecretStr | None = Field(None, alias="BOT_CONSOLE_PASSWORD")
    ttl_seconds: float = Field(24 * 3600, alias="BOT_TTL_SECONDS", gt=0)
    max_ttl_seconds: float = Field(7 * 24 * 3600, alias="BOT_MAX_TTL_SECONDS", gt=0)
    sweep_seconds: float = Field(5.0, alias="BOT_SWEEP_SECONDS", gt=0)
    shutdown_grace_seconds: float = Field(25.0, alias="BOT_SHUTDOWN_GRACE_SECONDS", ge=0, le=30)
    lease_seconds: float = Field(30.0, alias="BOT_LEASE_SECONDS", ge=1, le=3600)
    admins: Annotated[list[str], NoDecode] = Field(default_factory=list, alias="BOT_ADMINS")
    approvers: Annotated[list[str], NoDecode] = Field(default_factory=list, alias="BOT_APPROVERS")
    anyone_may_answer: bool = Field(False, alias="BOT_ANYONE_MAY_ANSWER")
    openai_base_url: str | None = Field(None, alias="OPENAI_BASE_URL")
    openai_api_key: SecretStr | None = Field(None, alias="OPENAI_API_KEY")
    openai_model: str = Field("gpt-4o-mini", alias="OPENAI_MODEL")
    log_format: Literal["auto", "json", "text"] = Field("auto", alias="BOT_LOG_FORMAT")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", alias="BOT_LOG_LEVEL")
    # PostgreSQL (a postgresql:// DATABASE_URL): connections per replica, and how
    # long one statement may run before the server cancels it.
    pg_pool_size: int = Field(10, alias="BOT_PG_POOL_SIZE", ge=1, le=200)
    pg_statement_timeout_seconds: float = Field(
        10.0, alias="BOT_PG_STATEMENT_TIMEOUT_SECONDS", gt=0, le=600
    )

    _split_admins = field_validator("admins", "approvers", mode="before")(_csv)

    @field_validator("database_url")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if not value.startswith(("sqlite:///", "memory://", "postgresql://", "postgres://")):
            # Never echo the value: a database URL may carry a password.
            raise ValueError(
                "use sqlite:///path/to/file.sqlite3, postgresql://user:password@host/db "
                "(several replicas), or memory:// for experiments"
            )
        return value

    @field_validator("console_password", "signing_keys", "openai_api_key")
    @classmethod
    def _not_blank(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("is set but blank; give it a value or unset it")
        return value

    @model_validator(mode="after")
    def _public_console_needs_a_password(self) -> Settings:
        if self.console and self.host not in LOOPBACK_HOSTS and self.console_password is None:
            raise ValueError(
                f"BOT_HOST={self.host} exposes the console beyond this machine; set "
                "BOT_CONSOLE_PASSWORD, or BOT_CONSOLE=false"
            )
        if self.openai_base_url and self.openai_api_key is None:
            raise ValueError("OPENAI_BASE_URL is set without OPENAI_API_KEY; set both")
        if self.max_ttl_seconds < self.ttl_seconds:
            raise ValueError(
                "BOT_TTL_SECONDS exceeds BOT_MAX_TTL_SECONDS; lower it or raise the max"
            )
        return self

    @property
    def console_is_local(self) -> bool:
        return self.host in LOOPBACK_HOSTS


def load_settings(**overrides: object) -> Settings:
    """Read and validate settings, or raise SettingsError with one line per problem."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        lines = []
        for problem in error.errors(include_url=False):
            name = _variable_for(problem["loc"])
            message = str(problem["msg"]).removeprefix("Value error, ")
            lines.append(f"{name}: {message}" if name else message)
        raise SettingsError(lines) from None


def _variable_for(location: tuple[int | str, ...]) -> str:
    if not location:
        return ""
    field = Settings.model_fields.get(str(location[0]))
    if field is not None and field.alias:
        return field.alias
    return str(location[0])
