"""Settings from the environment (and `.env`), validated once at start, composed here.

Each component declares its settings beside its code (``adapters/slack/settings.py``,
``bot/stores/settings.py``, ...); ``Settings`` holds one of each, the few
knobs that belong to the process itself, and the checks that span
components, such as a public bind needing a console password. A bad value
is reported as one line naming the variable and what to set, never as a
traceback; ``SettingsError`` carries those lines.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from adapters.console.settings import ConsoleSettings
from adapters.email.settings import EmailSettings
from adapters.mcp.settings import McpSettings
from adapters.mcp_gateway.settings import GatewaySettings
from adapters.slack.settings import SlackSettings
from adapters.teams.settings import TeamsSettings
from bot.admin import AdminSettings
from bot.api import ApiSettings, LinkSettings
from bot.audit import AuditSettings
from bot.component_settings import ComponentSettings
from bot.errors import BotError
from bot.human.signing import SigningSettings
from bot.human.ttl import TTLSettings
from bot.logs import LogSettings
from bot.providers.settings import ProviderSettings
from bot.service.answering.policy import PolicySettings
from bot.serving import ServingSettings
from bot.stores.settings import StoreSettings
from bot.webhooks import WebhookSettings


class SettingsError(BotError):
    """Configuration is unusable; ``lines`` say which variable and what to set."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


AGENTS_ONLY = "none"


class RunSettings(ComponentSettings):
    """How runs are served: which agent, how often questions are swept, leases, the stop."""

    # ``package.module:factory``, or ``none``: agents only, no chat agent (bot.app.agents_only).
    agent: str | None = Field(None, alias="BOT_AGENT", pattern=r"^(none|[\w.]+:\w+)$")
    sweep_seconds: float = Field(5.0, alias="BOT_SWEEP_SECONDS", gt=0)
    shutdown_grace_seconds: float = Field(25.0, alias="BOT_SHUTDOWN_GRACE_SECONDS", ge=0, le=30)
    lease_seconds: float = Field(30.0, alias="BOT_LEASE_SECONDS", ge=1, le=3600)

    @property
    def chats(self) -> bool:
        """An agent reads chat messages: every setting of BOT_AGENT but ``none``."""
        return self.agent != AGENTS_ONLY


class Settings(BaseModel):
    """Every component's settings, each read from the environment by its own class."""

    model_config = ConfigDict(frozen=True)

    # In the order their problems are reported.
    serving: ServingSettings = Field(default_factory=ServingSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    signing: SigningSettings = Field(default_factory=SigningSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    ttl: TTLSettings = Field(default_factory=TTLSettings)
    admin: AdminSettings = Field(default_factory=AdminSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    provider: ProviderSettings = Field(default_factory=ProviderSettings)
    logs: LogSettings = Field(default_factory=LogSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    teams: TeamsSettings = Field(default_factory=TeamsSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    email: EmailSettings = Field(default_factory=EmailSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    links: LinkSettings = Field(default_factory=LinkSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    mcp_gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)

    @model_validator(mode="after")
    def _public_bind_is_guarded(self) -> Settings:
        """Beyond loopback: the host names are set, the console locked, Teams authenticated."""
        serving, console = self.serving, self.console
        unlocked = console.enabled and not console.locked
        # A public console without a password is reported first, by the check below.
        named = serving.public_url or serving.allowed_hosts
        if not serving.is_local and not named and not unlocked:
            raise ValueError(
                f"BOT_HOST={serving.host} accepts requests from beyond this machine; set "
                "BOT_PUBLIC_URL (or BOT_ALLOWED_HOSTS) to the host names people use"
            )
        if unlocked and not serving.is_local:
            raise ValueError(
                f"BOT_HOST={serving.host} exposes the console beyond this machine; set "
                "BOT_CONSOLE_USERS for per-person sign-in (or set BOT_CONSOLE_PASSWORD, or "
                "BOT_CONSOLE=false)"
            )
        if self.teams.mode == "on" and not self.teams.app_id and not serving.is_local:
            raise ValueError(
                f"BOT_TEAMS=on without MicrosoftAppId would accept unauthenticated Teams "
                f"activities on BOT_HOST={serving.host}; set MicrosoftAppId and "
                "MicrosoftAppPassword, or bind 127.0.0.1 for emulator mode"
            )
        if self.links.signin and console.users is None:
            # The shared password signs in as ``operator``, whom no link is for.
            raise ValueError(
                "BOT_LINK_SIGNIN=true asks whoever opens an answer link to sign in to the console "
                "as its recipient, but BOT_CONSOLE_USERS names no one; list each email recipient "
                "there by their address (ana@example.com:<password>), or unset BOT_LINK_SIGNIN"
            )
        return self

    @property
    def teams_enabled(self) -> bool:
        """Teams is on: asked for, or (auto) with an app id, or on a loopback bind."""
        return self.teams.enabled(local=self.serving.is_local)

    @property
    def teams_emulator(self) -> bool:
        """No app id: activities are not authenticated (local use only)."""
        return self.teams_enabled and not self.teams.app_id

    def secrets(self) -> list[str]:
        """Every configured secret on its own, for the log filter to rewrite wherever it appears.

        These are the fields each component marks secret, so the list is
        never written out twice; a setting holding several (signing keys,
        console users) is split, as a log line would carry one of them.
        """
        return [value for part in self._parts() for value in part.secret_values()]

    def whereabouts(self) -> str:
        """The store and the data folder this process uses, as absolute paths: started from
        another folder, relative defaults would point at a new, empty ``var/``."""
        return (
            f"store {self.store.location}; data folder {self.signing.data_dir.resolve()} "
            f"(started in {Path.cwd()})"
        )

    def warnings(
        self, environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")
    ) -> list[str]:
        """Lines worth a warning at start: half-configured components, unknown variables."""
        lines = [line for part in self._parts() for line in part.warnings()]
        environ = os.environ if environ is None else environ
        return lines + unknown_variables([*environ, *_env_file_names(env_file)])

    def _parts(self) -> list[ComponentSettings]:
        return [getattr(self, name) for name in _components()]


def load_settings(**overrides: object) -> Settings:
    """Read and validate settings, or raise SettingsError with one line per problem.

    ``overrides`` are named by environment variable (``DATABASE_URL=...``)
    and win over the environment; a name no component reads is a TypeError.
    """
    components = _components()
    given: dict[str, dict[str, Any]] = {name: {} for name in components}
    for variable, value in overrides.items():
        owner = next((n for n, kind in components.items() if variable in kind.variables()), None)
        if owner is None:
            raise TypeError(f"load_settings() got {variable}, which no setting reads")
        given[owner][variable] = value
    parts: dict[str, ComponentSettings] = {}
    lines: list[str] = []
    for name, kind in components.items():
        try:
            parts[name] = kind(**given[name])
        except ValidationError as error:
            lines += _lines(kind, error)
    if lines:
        raise SettingsError(lines)
    try:
        return Settings.model_validate(parts)
    except ValidationError as error:
        raise SettingsError(_lines(ComponentSettings, error)) from None


# Read by the tests and benches, not by the bot: never reported as unknown.
NOT_SETTINGS = frozenset({"BOT_TEST_POSTGRES_URL", "BOT_BENCH_POSTGRES_URL", "BOT_CONTAINER_CACHE"})
PREFIXES = ("BOT_", "SLACK_", "TEAMS_")


# The settings read without a family prefix. A typo in one (DATABASE_ULR) has no prefix to
# catch it by, and the environment holds many unrelated names, so only a near miss in both
# spelling and length is warned about.
BARE_SETTINGS = ("DATABASE_URL", "PORT")


def known_variables() -> frozenset[str]:
    """Every environment variable some component reads."""
    return frozenset(name for kind in _components().values() for name in kind.variables())


def unknown_variables(names: Iterable[str]) -> list[str]:
    """One line per ``BOT_*``/``SLACK_*``/``TEAMS_*`` name no setting reads, with the nearest,
    and per near miss of a setting read without a prefix."""
    known = known_variables()
    lines = []
    for name in sorted(set(names)):
        if name in known or name in NOT_SETTINGS:
            continue
        if name.upper().startswith(PREFIXES):
            near = _unprefixed(name, known) or difflib.get_close_matches(
                name.upper(), sorted(known), n=1, cutoff=0.6
            )
        else:
            near = _bare_near_miss(name)
            if not near:
                continue
        hint = f"; did you mean {near[0]}?" if near else ""
        lines.append(f"{name} is not a setting this bot reads, so it is ignored{hint}")
    return lines


def _bare_near_miss(name: str) -> list[str]:
    """DATABASE_ULR means DATABASE_URL, POTR means PORT: one of ``BARE_SETTINGS`` misspelt."""
    upper = name.upper()
    return [
        bare
        for bare in BARE_SETTINGS
        if upper != bare
        and abs(len(upper) - len(bare)) <= 1
        and difflib.SequenceMatcher(None, upper, bare).ratio() >= 0.75
    ]


def _unprefixed(name: str, known: frozenset[str]) -> list[str]:
    """BOT_PORT means PORT, BOT_DATABASE_URL means DATABASE_URL: a known name without a prefix."""
    bare = name.upper().partition("_")[2]
    return [k for k in sorted(known) if k.upper() == bare and not k.upper().startswith(PREFIXES)]


def _env_file_names(path: Path) -> list[str]:
    from dotenv import dotenv_values

    if not path.is_file():
        return []
    return [name for name in dotenv_values(path) if name]


def _components() -> dict[str, type[ComponentSettings]]:
    found: dict[str, type[ComponentSettings]] = {}
    for name, field in Settings.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, ComponentSettings):
            found[name] = kind
    return found


def _lines(kind: type[ComponentSettings], error: ValidationError) -> list[str]:
    lines = []
    for problem in error.errors(include_url=False):
        name = kind.variable_for(problem["loc"])
        message = str(problem["msg"]).removeprefix("Value error, ")
        lines.append(f"{name}: {message}" if name else message)
    return lines
