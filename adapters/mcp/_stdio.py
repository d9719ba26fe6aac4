"""``python -m bot mcp``: the MCP tools over stdio, asking the bridge at ``BOT_MCP_BRIDGE_URL``."""

from __future__ import annotations

import contextlib
import uuid

from adapters.mcp._tools import BridgeTools, build_server
from adapters.mcp.settings import McpSettings
from bot.client import Bridge
from bot.errors import BotError


class McpConfigError(BotError):
    """The stdio server lacks the bridge's URL or an API key."""


async def serve_stdio(settings: McpSettings) -> None:
    """Serve until the client closes stdin."""
    if settings.bridge_url is None or settings.api_key is None:
        raise McpConfigError(
            "BOT_MCP_BRIDGE_URL and BOT_MCP_API_KEY: set the bridge's URL and an agents API key "
            "(python -m bot api-key create) for python -m bot mcp"
        )
    # One client connection per process: what a retried call within it shares.
    scope = f"stdio:{uuid.uuid4()}"
    async with Bridge(settings.bridge_url, settings.api_key.get_secret_value()) as bridge:
        asking = BridgeTools(
            bridge_for=lambda _ctx: contextlib.nullcontext(bridge),
            scope_for=lambda _ctx: scope,
            route=settings.route,
            answerers=tuple(settings.answerers),
            wait_seconds=settings.wait_seconds,
        )
        await build_server(asking).run_stdio_async()
