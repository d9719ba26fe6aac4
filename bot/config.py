"""Settings from the environment (and `.env`), validated once at start.

A bad value is reported as one line naming the variable and what to set,
never as a traceback; ``SettingsError`` carries those lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.errors import BotError

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
MIN_PASSWORD = 12
_USER_NAME = re.compile(r"^[A-Za-z0-9._-]{1,40}$")


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
    admins: Annotated[list[str], NoDecode] = Field(default_factory=list, alias="BOT_ADMINS")
    approvers: Annotated[list[str], NoDecode] = Field(default_factory=list, alias="BOT_APPROVERS")
    anyone_may_answer: bool = Field(False, alias="BOT_ANYONE_MAY_ANSWER")
    openai_base_url: str | None = Field(None, alias="OPENAI_BASE_URL")
    openai_api_key: SecretStr | None = Field(None, alias="OPENAI_API_KEY")
    openai_model: str = Field("gpt-4o-mini", alias="OPENAI_MODEL")
    log_format: Literal["auto", "json", "text"] = Field("auto", alias="BOT_LOG_FORMAT")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", alias="BOT_LOG_LEVEL")
    # HTTP surface
    public_url: str | None = Field(None, alias="BOT_PUBLIC_URL", pattern=r"^https?://[^/?#@]+/?")
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, alias="BOT_ALLOWED_HOSTS"
    )
    console_users: SecretStr | None = Field(None, alias="BOT_CONSOLE_USERS")
    header_timeout_seconds: float = Field(10.0, alias="BOT_HEADER_TIMEOUT_SECONDS", gt=0)
    body_timeout_seconds: float = Field(10.0, alias="BOT_BODY_TIMEOUT_SECONDS", gt=0)
    max_json_depth: int = Field(32, alias="BOT_MAX_JSON_DEPTH", ge=2, le=200)
    max_event_streams: int = Field(200, alias="BOT_MAX_EVENT_STREAMS", ge=1)
    max_event_streams_per_client: int = Field(8, alias="BOT_MAX_EVENT_STREAMS_PER_CLIENT", ge=1)

    _split_hosts = field_validator("allowed_hosts", mode="before")(_csv)

    @field_validator("console_users")
    @classmethod
    def _console_users_are_named_and_long(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            parse_console_users(value.get_secret_value())
        return value

    @field_validator("openai_base_url")
    @classmethod
    def _model_url_is_absolute(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^/?#\s@]+(/[^?#\s]*)?", value):
            raise ValueError(
                "use the API's base URL, like https://api.openai.com/v1 (http or https, "
                "no query string)"
            )
        return value

    @model_validator(mode="after")
    def _public_bind_names_its_hosts(self) -> Settings:
        # A public console without a password is reported first, by the check below.
        unlocked = self.console and not (self.console_password or self.console_users)
        named = self.public_url or self.allowed_hosts
        if self.host not in LOOPBACK_HOSTS and not named and not unlocked:
            raise ValueError(
                f"BOT_HOST={self.host} accepts requests from beyond this machine; set "
                "BOT_PUBLIC_URL (or BOT_ALLOWED_HOSTS) to the host names people use"
            )
        password = self.console_password
        if password is not None and len(password.get_secret_value()) < MIN_PASSWORD:
            raise ValueError(f"BOT_CONSOLE_PASSWORD must be at least {MIN_PASSWORD} characters")
        return self

    _split_admins = field_validator("admins", "approvers", mode="before")(_csv)

    @field_validator("database_url")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if not value.startswith(("sqlite:///", "memory://")):
            raise ValueError("use sqlite:///path/to/file.sqlite3 (or memory:// for experiments)")
        return value

    @field_validator("console_password", "signing_keys", "openai_api_key")
    @classmethod
    def _not_blank(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("is set but blank; give it a value or unset it")
        return value

    @model_validator(mode="after")
    def _public_console_needs_a_password(self) -> Settings:
        if (
            self.console
            and self.host not in LOOPBACK_HOSTS
            and self.console_password is None
            and self.console_users is None
        ):
            raise ValueError(
                f"BOT_HOST={self.host} exposes the console beyond this machine; set "
                "BOT_CONSOLE_USERS for per-person sign-in (or set BOT_CONSOLE_PASSWORD, or "
                "BOT_CONSOLE=false)"
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


def parse_console_users(text: str) -> dict[str, str]:
    """``name:password,name:password`` -> {name: password}, or ValueError naming the problem."""
    users: dict[str, str] = {}
    for entry in (item.strip() for item in text.split(",")):
        name, colon, password = entry.partition(":")
        if not colon or not _USER_NAME.fullmatch(name):
            raise ValueError(
                "write name:password,name:password with names of letters, digits, . _ or -"
            )
        if len(password) < MIN_PASSWORD:
            raise ValueError(f"the password of {name} must be at least {MIN_PASSWORD} characters")
        if name in users:
            raise ValueError(f"{name} is listed twice")
        users[name] = password
    return users


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
