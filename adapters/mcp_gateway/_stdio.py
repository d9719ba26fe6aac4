"""``python -m bot mcp-gateway``: the gateway over stdio, asking the bridge at
``BOT_MCP_BRIDGE_URL`` with ``BOT_MCP_API_KEY``, as ``python -m bot mcp`` does."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from adapters.mcp import McpConfigError
from adapters.mcp.settings import McpSettings
from adapters.mcp_gateway._gateway import Caller
from adapters.mcp_gateway._start import caller, checked, gateway_file, new_gateway
from adapters.mcp_gateway.settings import GatewaySettings
from bot.client import Bridge


async def serve_gateway_stdio(
    mcp: McpSettings, settings: GatewaySettings, *, data_dir: Path
) -> None:
    """Serve until the client closes stdin; a file or setting that cannot be used is refused
    first, in one sentence (``BotError``)."""
    config = checked(gateway_file(settings), route=mcp.route, answerers=mcp.answerers)
    if mcp.bridge_url is None or mcp.api_key is None:
        raise McpConfigError(
            "BOT_MCP_BRIDGE_URL and BOT_MCP_API_KEY: set the bridge's URL and an agents API key "
            "(python -m bot api-key create) for python -m bot mcp-gateway"
        )
    key = mcp.api_key.get_secret_value()
    gateway = new_gateway(config, data_dir=data_dir, route=mcp.route, answerers=mcp.answerers)

    async def caller_for(ctx: ServerRequestContext[Any, Any]) -> Caller:
        return caller(ctx, key=key, key_name="BOT_MCP_API_KEY")

    async with Bridge(mcp.bridge_url, key) as bridge:
        await gateway.start()
        try:
            server = gateway.server(
                bridge_for=lambda _ctx: contextlib.nullcontext(bridge),
                caller_for=caller_for,
            )
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            await gateway.close()
            gateway.journal.close()
