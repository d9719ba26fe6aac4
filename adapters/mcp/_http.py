"""``/mcp`` on the bridge: the SDK's Streamable HTTP transport behind the ``/v1`` API keys.

A caller signs in with the bearer key it uses for ``/v1``; the tools then
call ``/v1`` on this same bridge with that key, so the key's routes and
every rule of the agents API apply unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import hdrs, web
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from adapters.mcp._asgi import AsgiApp, call_asgi
from adapters.mcp._tools import BridgeTools, build_server
from adapters.mcp.settings import McpSettings
from bot.api import API_KEYS, NO_KEY, OTHER_ORIGIN, TOO_LARGE, WRONG_KEY, ApiRefusal, envelope
from bot.client import Bridge
from bot.serving import ALLOWED_HOSTS

PATH = "/mcp"
# As the bridge's own routes: no MCP message it takes needs more.
MAX_BODY_BYTES = 64 * 1024


def mount_mcp(app: web.Application, settings: McpSettings, *, bridge_url: str) -> None:
    """Serve the MCP tools at ``/mcp``; ``bridge_url`` is how this bridge reaches its ``/v1``."""

    @asynccontextmanager
    async def bridge_for(ctx: Context) -> AsyncIterator[Bridge]:
        async with Bridge(bridge_url, presented_key(ctx.headers) or "") as bridge:
            yield bridge

    def scope_for(ctx: Context) -> str:
        # No session at 2026-07-28 (and none here for older clients: stateless), so
        # the caller's key is what a retried call shares.
        return "http:" + hashlib.sha256((presented_key(ctx.headers) or "").encode()).hexdigest()

    server = build_server(
        BridgeTools(
            bridge_for=bridge_for,
            scope_for=scope_for,
            route=settings.route,
            answerers=tuple(settings.answerers),
            wait_seconds=settings.wait_seconds,
        )
    )
    asgi: AsgiApp = server.streamable_http_app(
        streamable_http_path=PATH,
        # Nothing ties a request to this replica: any replica answers any call.
        stateless_http=True,
        max_request_body_size=MAX_BODY_BYTES,
        # The bridge's own Host guard and the Origin check in handle() run first, with
        # the names this deployment serves.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    handle = behind_api_keys(asgi)

    async def running(_: web.Application) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    # POST only: stateless, so there is no server-to-client GET stream to open and
    # no session to DELETE; the spec's answer to both is 405.
    app.router.add_post(PATH, handle)
    app.cleanup_ctx.append(running)


def behind_api_keys(asgi: AsgiApp) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """An aiohttp handler serving ``asgi`` to callers with a ``/v1`` key as their bearer token,
    and refusing a browser page of another origin, as ``/mcp`` does (the gateway's too)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        # The spec's DNS-rebinding rule: a browser page's Origin must be one we serve
        # (the Host guard has already checked the name); MCP clients send none.
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is not None and not request.app[ALLOWED_HOSTS].allows_origin(origin):
            return envelope(ApiRefusal("forbidden", OTHER_ORIGIN))
        presented = presented_key(request.headers)
        if not presented:
            return _unauthorized(NO_KEY)
        # Every key is ASCII; a byte that is not cannot name one (and would not hash).
        if not presented.isascii() or await request.app[API_KEYS].holder(presented) is None:
            return _unauthorized(WRONG_KEY)
        try:
            # The guard has read a slow body under its deadline; this returns those bytes.
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            limit = request.app._client_max_size
            return envelope(ApiRefusal("payload_too_large", TOO_LARGE.format(limit=limit)))
        return await call_asgi(asgi, request, body)

    return handle


def presented_key(headers: Any) -> str | None:
    """The bearer token of an ``Authorization`` header, if there is one."""
    if headers is None:
        return None
    value = headers.get("Authorization") or headers.get("authorization") or ""
    scheme, _, presented = str(value).partition(" ")
    if scheme.lower() != "bearer":
        return None
    return presented.strip() or None


def _unauthorized(sentence: str) -> web.Response:
    response = envelope(ApiRefusal("unauthorized", sentence))
    response.headers["WWW-Authenticate"] = "Bearer"
    return response
