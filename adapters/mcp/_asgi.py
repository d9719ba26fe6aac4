"""Serve an ASGI app (the SDK's Streamable HTTP app) from an aiohttp handler.

The bridge is an aiohttp app and the SDK's transport is Starlette's; this
hands one request across and streams the answer back (an SSE stream too),
so ``/mcp`` lives on the bridge's own port behind its own guards.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
AsgiApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]
_CHUNK = 64 * 1024


async def call_asgi(app: AsgiApp, request: web.Request) -> web.StreamResponse:
    """The ASGI app's response to ``request``, streamed as it writes it."""
    finished = asyncio.Event()
    body_done = False
    response: web.StreamResponse | None = None
    started: Message | None = None

    async def receive() -> Message:
        nonlocal body_done
        if not body_done:
            chunk = await request.content.read(_CHUNK)
            body_done = request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": not body_done}
        # The body is in; an app that listens for a disconnect hears it once we are done.
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal response, started
        if message["type"] == "http.response.start":
            started = message
            return
        if message["type"] != "http.response.body" or started is None:
            return
        if response is None:
            response = web.StreamResponse(status=started["status"])
            for name, value in started.get("headers", []):
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        body = message.get("body", b"")
        if body:
            await response.write(body)
        if not message.get("more_body", False):
            await response.write_eof()

    try:
        await app(_scope(request), receive, send)
    finally:
        finished.set()
    if response is None:
        return web.Response(status=started["status"] if started else 500)
    return response


def _scope(request: web.Request) -> Scope:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    host, _, port = request.host.rpartition(":") if ":" in request.host else (request.host, "", "")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()
        ],
        "client": tuple(peer[:2]) if peer else None,
        "server": (host, int(port) if port.isdigit() else 80),
    }
