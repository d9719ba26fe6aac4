"""The gateway's file: its upstream servers and its rules, parsed once at start.

TOML, or JSON when the name ends in ``.json``. Unknown fields are refused, so
a misspelt ``action`` never quietly means the default. ``${VAR}`` in an
upstream's ``env`` or ``headers`` is read from the environment here; those
values are kept as secrets and never shown (not in an error, not in a log).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.client import route_of
from bot.contract.decisions import Decision
from bot.contract.models import (
    MAX_TTL_SECONDS,
    MIN_TTL_SECONDS,
    EscalationStep,
    Policy,
    Route,
    validation_sentence,
)
from bot.errors import BotError

# Tools are offered as ``<upstream>__<tool>``: some clients refuse dots in tool names.
SEPARATOR = "__"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FILE = ConfigDict(extra="forbid", strict=True, frozen=True)


def _route_reads(value: str) -> str:
    route_of(value)
    return value


# A route as BOT_MCP_ROUTE spells it (surface:conversation), checked as /v1 checks a route.
RouteText = Annotated[str, AfterValidator(_route_reads)]


class GatewayConfigError(BotError):
    """The gateway's file cannot be used; the message names the line or the field."""


class GatewayOptions(BaseModel):
    """``[gateway]``: how long one call waits, and where elicitations go by default."""

    model_config = _FILE
    wait_seconds: float = Field(50.0, gt=0, le=3600)
    elicit_route: RouteText | None = None

    @property
    def elicit(self) -> Route | None:
        return None if self.elicit_route is None else route_of(self.elicit_route)


class Upstream(BaseModel):
    """``[[upstreams]]``: one MCP server, started as a command (stdio) or reached by URL."""

    model_config = _FILE
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9-]+$", max_length=40)]
    command: list[str] | None = Field(None, min_length=1)
    env: dict[str, SecretStr] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    # How long one forwarded call may take before the upstream is said to hang.
    timeout_seconds: float = Field(300.0, gt=0, le=3600)

    @field_validator("env", "headers", mode="before")
    @classmethod
    def _from_environment(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {name: SecretStr(_expanded(name, text)) for name, text in value.items()}

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL of a Streamable HTTP MCP server")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) and url (Streamable HTTP)")
        if self.url is not None and (self.env or self.cwd):
            raise ValueError("env and cwd are for a command; a url takes headers")
        if self.command is not None and self.headers:
            raise ValueError("headers are for a url; a command takes env")
        return self


class Rule(BaseModel):
    """``[[rules]]``: what happens to the tools ``tools`` globs (``upstream__tool``)."""

    model_config = _FILE
    tools: str = Field(min_length=1)
    action: Literal["allow", "deny", "approve"]
    # deny: the sentence the model reads; approve: shown to the approver beside the call.
    reason: str | None = Field(None, min_length=1, max_length=500)
    route: RouteText | None = None
    answerers: list[str] | None = Field(None, min_length=1)
    allow: list[Decision] | None = Field(None, min_length=1)
    ttl_seconds: int | None = Field(None, ge=MIN_TTL_SECONDS, le=MAX_TTL_SECONDS)
    risk: Literal["low", "medium", "high"] = "high"
    # Who answers an upstream's elicitation during these calls: a person through the route,
    # or the MCP client itself when it can be asked (else a person after all).
    elicit: Literal["person", "client"] | None = None
    # The policy fields /v1 takes, by the same names (bot/contract/models.py, Policy).
    quorum: int | None = None
    reject: Literal["any", "quorum"] | None = None
    remind_after_seconds: int | None = None
    max_reminders: int | None = None
    escalate: list[EscalationStep] | None = None
    requester_may_answer: bool | None = None
    on_expire: Literal["expire", "reject"] | None = None

    @model_validator(mode="after")
    def _fits_action(self) -> Self:
        # route and answerers also say where an allowed call's elicitations are asked.
        asking = ("route", "answerers", "elicit") if self.action == "deny" else ()
        approving = ("allow", "ttl_seconds", *_POLICY_FIELDS) if self.action != "approve" else ()
        given = [name for name in (*asking, *approving) if getattr(self, name) is not None]
        if given:
            only = "approve and allow" if given[0] in asking else "approve"
            raise ValueError(f"{given[0]} applies to action {only} only")
        self.policy  # noqa: B018 - built now so that a policy /v1 would refuse fails at start
        return self

    @property
    def policy(self) -> Policy | None:
        fields = {name: getattr(self, name) for name in _POLICY_FIELDS}
        given = {name: value for name, value in fields.items() if value is not None}
        return Policy.model_validate(given) if given else None


_POLICY_FIELDS = (
    "quorum",
    "reject",
    "remind_after_seconds",
    "max_reminders",
    "escalate",
    "requester_may_answer",
    "on_expire",
)


class GatewayFile(BaseModel):
    """The whole file."""

    model_config = _FILE
    gateway: GatewayOptions = Field(default_factory=GatewayOptions)
    upstreams: list[Upstream] = Field(min_length=1)
    rules: list[Rule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _distinct_names(self) -> Self:
        names = [upstream.name for upstream in self.upstreams]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"two upstreams are named {name!r}; tools need one prefix each")
        return self


def load_gateway_file(path: Path) -> GatewayFile:
    """The file at ``path``, parsed; ``GatewayConfigError`` in one sentence if it cannot be."""
    where = f"BOT_MCP_GATEWAY={path}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise GatewayConfigError(f"{where}: cannot read it ({error.strerror}).") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise GatewayConfigError(f"{where}: {error}.") from None
    try:
        return GatewayFile.model_validate(data)
    except ValidationError as error:
        raise GatewayConfigError(f"{where}: {_first_problem(error)}") from None


def _first_problem(error: ValidationError) -> str:
    # A misspelt field also leaves the right one missing: name the misspelling, the cause.
    for problem in error.errors(include_url=False):
        if problem["type"] == "extra_forbidden":
            where = ".".join(str(part) for part in problem["loc"])
            return f"{where}: is not a field the gateway's file takes; check its spelling."
    return validation_sentence(error)


def variables_in(text: str) -> list[str]:
    """The environment variables ``text`` names as ``${VAR}``."""
    return _VARIABLE.findall(text)


def _expanded(name: str, text: Any) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a string")

    def value(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable not in os.environ:
            raise ValueError(f"{name} names ${{{variable}}}, which is not set in the environment")
        return os.environ[variable]

    return _VARIABLE.sub(value, text)
