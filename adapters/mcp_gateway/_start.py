"""What both ways of serving the gateway check and build at start."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from mcp.server.context import ServerRequestContext

from adapters.mcp_gateway._config import GatewayConfigError, GatewayFile, load_gateway_file
from adapters.mcp_gateway._gateway import Caller, Gateway
from adapters.mcp_gateway._journal import FILE_NAME, Journal
from adapters.mcp_gateway.settings import GatewaySettings
from bot.client import route_of
from bot.contract.models import Route

NO_FILE = "BOT_MCP_GATEWAY: set it to the path of the gateway's file (docs/agents/mcp-gateway.md)."


def gateway_file(settings: GatewaySettings) -> GatewayFile:
    if settings.file is None:
        raise GatewayConfigError(NO_FILE)
    return load_gateway_file(settings.file)


def checked(config: GatewayFile, *, route: str | None, answerers: Sequence[str]) -> GatewayFile:
    """The file, refused at start in one sentence if a rule that asks has no one to ask."""
    for index, rule in enumerate(config.rules):
        if rule.action != "approve":
            continue
        if rule.route is None and route is None:
            raise GatewayConfigError(
                f"rules[{index}] ({rule.tools}): approve needs a route; give the rule one or set "
                "BOT_MCP_ROUTE."
            )
        if rule.answerers is None and not answerers:
            raise GatewayConfigError(
                f"rules[{index}] ({rule.tools}): approve needs answerers; give the rule some or "
                "set BOT_MCP_ANSWERERS."
            )
    return config


class MayUseRoutes(Protocol):
    """An agents API key, as the start-up check of the rules' routes relies on it."""

    def may_use(self, surface: str, conversation: str) -> bool: ...


def asked_routes(config: GatewayFile, *, route: str | None) -> list[tuple[str, Route]]:
    """Every route the gateway may ask on, each with the field that names it."""
    named: list[tuple[str, str | None]] = [
        ("BOT_MCP_ROUTE", route),
        ("gateway.elicit_route", config.gateway.elicit_route),
        *((f"rules[{n}].route", rule.route) for n, rule in enumerate(config.rules)),
    ]
    return [(field, route_of(value)) for field, value in named if value is not None]


def refuse_unusable_routes(
    config: GatewayFile, *, route: str | None, keys: Sequence[MayUseRoutes]
) -> None:
    """Refused at start, in one sentence naming the field, a route no ``/v1`` key may post to:
    every call asking there would be refused."""
    for field, asked in asked_routes(config, route=route):
        if not any(key.may_use(asked.surface, asked.conversation) for key in keys):
            raise GatewayConfigError(
                f"{field}: no agents API key may post to {asked.key}; give a key that route "
                "(python -m bot api-key create NAME --route ...) or name another route."
            )


def new_gateway(
    config: GatewayFile, *, data_dir: Path, route: str | None, answerers: Sequence[str]
) -> Gateway:
    return Gateway(config, Journal(data_dir / FILE_NAME), route=route, answerers=tuple(answerers))


def caller(ctx: ServerRequestContext[Any, Any], *, key: str, key_name: str) -> Caller:
    """Who calls: the client's own name (as it says; shown, never trusted) and its key."""
    params = ctx.session.client_params
    meta = ctx.meta or {}
    said = meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None
    if params is not None:
        name = params.client_info.name
    elif isinstance(said, dict) and isinstance(said.get("name"), str):
        name = said["name"]
    else:
        name = "An MCP client"
    # Stable across restarts, so a call repeated to a restarted gateway finds its question.
    scope = "key:" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return Caller(client=name[:100], key=key_name, scope=scope)
