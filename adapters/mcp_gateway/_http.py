"""``/mcp/gateway`` on the bridge: the gateway over Streamable HTTP behind the ``/v1`` keys.

A caller signs in with the bearer key it uses for ``/v1``, and the gateway asks
``/v1`` on this same bridge with that key, so the key's routes bound the
rules' routes exactly as they bound its own questions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web
from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings

from adapters.mcp import behind_api_keys, presented_key
from adapters.mcp.settings import McpSettings
from adapters.mcp_gateway._gateway import Caller
from adapters.mcp_gateway._start import (
    caller,
    checked,
    gateway_file,
    new_gateway,
    refuse_unusable_routes,
)
from adapters.mcp_gateway.settings import GatewaySettings
from bot.api import API_KEYS
from bot.client import Bridge

PATH = "/mcp/gateway"
# Upstream tools take larger arguments than the bridge's own tools do.
MAX_BODY_BYTES = 1024 * 1024


def mount_gateway(
    app: web.Application,
    mcp: McpSettings,
    settings: GatewaySettings,
    *,
    data_dir: Path,
    bridge_url: str,
) -> None:
    """Serve the gateway at ``/mcp/gateway``; its file is read now, so that a file that cannot
    be used stops the bridge at start in one sentence."""
    config = checked(gateway_file(settings), route=mcp.route, answerers=mcp.answerers)
    gateway = new_gateway(config, data_dir=data_dir, route=mcp.route, answerers=mcp.answerers)

    def key_of(ctx: ServerRequestContext[Any, Any]) -> str:
        return presented_key(getattr(ctx.request, "headers", None)) or ""

    @asynccontextmanager
    async def bridge_for(ctx: ServerRequestContext[Any, Any]) -> AsyncIterator[Bridge]:
        async with Bridge(bridge_url, key_of(ctx)) as bridge:
            yield bridge

    async def caller_for(ctx: ServerRequestContext[Any, Any]) -> Caller:
        key = key_of(ctx)
        holder = await app[API_KEYS].holder(key)
        return caller(ctx, key=key, key_name=holder.name if holder else "unknown")

    server = gateway.server(bridge_for=bridge_for, caller_for=caller_for)
    asgi = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        max_request_body_size=MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    async def running(_: web.Application) -> AsyncIterator[None]:
        keys = await app[API_KEYS].every_key()
        refuse_unusable_routes(config, route=mcp.route, keys=keys)
        await gateway.start()
        try:
            async with server.session_manager.run():
                yield
        finally:
            await gateway.close()
            gateway.journal.close()

    app.router.add_post(PATH, behind_api_keys(asgi))
    app.cleanup_ctx.append(running)
