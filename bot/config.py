"""Settings from the environment (and `.env`), validated once at start.

A bad value is reported as one line naming the variable and what to set,
never as a traceback; ``SettingsError`` carries those lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
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


def _names(*names: str) -> AliasChoices:
    return AliasChoices(*names)


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
    # Teams: the Bot Framework's own names, TEAMS_ aliases, and the SDK's keys for other clouds.
    teams: Literal["auto", "on", "off"] = Field("auto", alias="BOT_TEAMS")
    teams_app_id: str | None = Field(
        None, alias="MicrosoftAppId", validation_alias=_names("MicrosoftAppId", "TEAMS_APP_ID")
    )
    teams_app_password: SecretStr | None = Field(
        None,
        alias="MicrosoftAppPassword",
        validation_alias=_names("MicrosoftAppPassword", "TEAMS_APP_PASSWORD"),
    )
    teams_app_type: Literal["MultiTenant", "SingleTenant", "UserAssignedMSI"] = Field(
        "MultiTenant",
        alias="MicrosoftAppType",
        validation_alias=_names("MicrosoftAppType", "TEAMS_APP_TYPE"),
    )
    teams_app_tenant_id: str | None = Field(
        None,
        alias="MicrosoftAppTenantId",
        validation_alias=_names("MicrosoftAppTenantId", "TEAMS_APP_TENANT_ID"),
    )
    teams_openid_metadata_url: str | None = Field(
        None, alias="TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL"
    )
    teams_token_issuer: str | None = Field(None, alias="TO_BOT_FROM_CHANNEL_TOKEN_ISSUER")
    teams_login_url: str | None = Field(None, alias="TO_CHANNEL_FROM_BOT_LOGIN_URL")
    teams_oauth_scope: str | None = Field(None, alias="TO_CHANNEL_FROM_BOT_OAUTH_SCOPE")

    # Slack (adapters/slack): one workspace with a bot token, several through
    # OAuth; Socket Mode when an app token is set. See README, "Slack".
    slack_bot_token: SecretStr | None = Field(None, alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, alias="SLACK_SIGNING_SECRET")
    slack_app_token: SecretStr | None = Field(None, alias="SLACK_APP_TOKEN")
    slack_client_id: str | None = Field(None, alias="SLACK_CLIENT_ID")
    slack_client_secret: SecretStr | None = Field(None, alias="SLACK_CLIENT_SECRET")
    slack_installation_key: SecretStr | None = Field(None, alias="SLACK_INSTALLATION_KEY")
    slack_api_url: str = Field("https://slack.com/api/", alias="SLACK_API_URL")
    slack_answerers: str = Field("", alias="SLACK_ANSWERERS")

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

    # PostgreSQL (a postgresql:// DATABASE_URL): connections per replica, and how
    # long one statement may run before the server cancels it.
    pg_pool_size: int = Field(10, alias="BOT_PG_POOL_SIZE", ge=1, le=200)
    pg_statement_timeout_seconds: float = Field(
        10.0, alias="BOT_PG_STATEMENT_TIMEOUT_SECONDS", gt=0, le=600
    )

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

    # Admin (bot/admin): admins are BOT_ADMINS (ids as surfaces authenticate
    # them: slack:T:U, teams:tenant:aad); these add Slack user groups (S...).
    admin_groups: Annotated[list[str], NoDecode] = Field(
        default_factory=list, alias="BOT_ADMIN_GROUPS"
    )

    _split_admins = field_validator("admins", "approvers", "admin_groups", mode="before")(_csv)

    @field_validator("database_url")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if not value.startswith(("sqlite:///", "postgresql://", "postgres://")):
            # Never echo the value: a database URL may carry a password.
            raise ValueError(
                "use sqlite:///path/to/file.sqlite3, or postgresql://user:password@host/db "
                "(several replicas)"
            )
        return value

    @field_validator(
        "console_password",
        "signing_keys",
        "openai_api_key",
        "teams_app_password",
        "slack_bot_token",
        "slack_signing_secret",
        "slack_app_token",
        "slack_client_secret",
        "slack_installation_key",
    )
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
        self._teams_fits()
        return self

    def _teams_fits(self) -> None:
        if self.teams == "on" and not self.teams_app_id and not self.console_is_local:
            raise ValueError(
                f"BOT_TEAMS=on without MicrosoftAppId would accept unauthenticated Teams "
                f"activities on BOT_HOST={self.host}; set MicrosoftAppId and "
                "MicrosoftAppPassword, or bind 127.0.0.1 for emulator mode"
            )
        if not self.teams_app_id:
            return
        if self.teams_app_type != "UserAssignedMSI" and self.teams_app_password is None:
            raise ValueError(
                "MicrosoftAppId is set without MicrosoftAppPassword; set the client secret "
                "of the Azure Bot's app registration"
            )
        if self.teams_app_type != "MultiTenant" and not self.teams_app_tenant_id:
            raise ValueError(
                f"MicrosoftAppType={self.teams_app_type} needs MicrosoftAppTenantId; set "
                "the directory (tenant) id of the app registration"
            )

    @field_validator("slack_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("use the Web API's base URL, e.g. https://slack.com/api/")
        return value if value.endswith("/") else value + "/"

    @field_validator("slack_answerers")
    @classmethod
    def _answerers(cls, value: str) -> str:
        from bot.policy import parse_rules

        parse_rules(value)
        return value

    @model_validator(mode="after")
    def _slack_complete(self) -> Settings:
        http = self.slack_signing_secret is not None
        socket = self.slack_app_token is not None
        if socket and not self.slack_app_token.get_secret_value().startswith("xapp-"):  # type: ignore[union-attr]
            raise ValueError("SLACK_APP_TOKEN is an app-level token starting with xapp-")
        if self.slack_bot_token is not None and not (http or socket):
            raise ValueError(
                "SLACK_BOT_TOKEN is set without SLACK_SIGNING_SECRET (events over HTTP) or "
                "SLACK_APP_TOKEN (Socket Mode); set one"
            )
        if self.slack_client_id is not None:
            if self.slack_client_secret is None or not http:
                raise ValueError(
                    "SLACK_CLIENT_ID needs SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET for OAuth"
                )
            if self.slack_bot_token is not None:
                raise ValueError(
                    "set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID (OAuth), not both"
                )
        return self

    @property
    def slack_mode(self) -> str | None:
        """How Slack is configured, in words; None when it is not."""
        if self.slack_bot_token is None and self.slack_client_id is None:
            return None
        workspaces = "one workspace" if self.slack_bot_token else "OAuth, many workspaces"
        transport = "Socket Mode" if self.slack_app_token else "HTTP at /slack/events"
        return f"{workspaces}, {transport}"

    @property
    def console_is_local(self) -> bool:
        return self.host in LOOPBACK_HOSTS

    @property
    def teams_enabled(self) -> bool:
        """On when asked, or (auto) with an app id, or in emulator mode on loopback."""
        if self.teams == "auto":
            return bool(self.teams_app_id) or self.console_is_local
        return self.teams == "on"

    @property
    def teams_emulator(self) -> bool:
        """No app id: activities are not authenticated (local use only)."""
        return self.teams_enabled and not self.teams_app_id


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
