"""Serve an ASGI app (the SDK's Streamable HTTP app) from an aiohttp handler.

The bridge is an aiohttp app and the SDK's transport is Starlette's; this
hands one request across and streams the answer back (an SSE stream too),
so ``/mcp`` lives on the bridge's own port behind its own guards.

Written here rather than taken from aiohttp-asgi, the one maintained mount
of ASGI on aiohttp: it reads ``request.content``, which is empty once the
bridge's body guard has read a slow body, and after the body its
``receive`` returns at once without ever saying ``http.disconnect``, so the
SDK's disconnect watcher spins and starves the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Scope = MutableMapping[str, Any]
AsgiMessage = MutableMapping[str, Any]
AsgiApp = Callable[
    [Scope, Callable[[], Awaitable[AsgiMessage]], Callable[[AsgiMessage], Awaitable[None]]],
    Awaitable[None],
]


async def call_asgi(app: AsgiApp, request: web.Request, body: bytes) -> web.StreamResponse:
    """The ASGI app's response to ``request`` with its whole ``body``, streamed as it writes it.

    The caller reads the body with ``request.read()``: aiohttp keeps what it
    read, so the bytes are the same whether the body guard or the caller read
    them first (``request.content`` is drained after the first).
    """
    finished = asyncio.Event()
    body_sent = False
    response: web.StreamResponse | None = None
    started: AsgiMessage | None = None

    async def receive() -> AsgiMessage:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        # Only a disconnect is left to say, and it must block until there is one:
        # a receive that returns at once has the app's watcher spin the loop.
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: AsgiMessage) -> None:
        nonlocal response, started
        if message["type"] == "http.response.start":
            started = message
            return
        if message["type"] != "http.response.body" or started is None:
            return
        if response is None:
            response = web.StreamResponse(status=started["status"])
            for name, value in started.get("headers", []):
                # ASGI header bytes are latin-1 by definition: every byte decodes.
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        chunk = message.get("body", b"")
        if chunk:
            await response.write(chunk)
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
    url = request.url
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
        # The bytes as they came: re-encoding aiohttp's decoded text fails on a
        # byte that is not ASCII, and ASGI wants the bytes anyway.
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if peer else None,
        "server": (url.host or "", url.port or (443 if request.secure else 80)),
    }
