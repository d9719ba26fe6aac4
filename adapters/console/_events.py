"""``GET /api/events``: Server-Sent Events telling the page what to re-read.

A stream ends when the hub closes (shutdown), or when a write finds the
client gone; the heartbeat makes sure such a write happens every interval.
"""

from __future__ import annotations

import json

from aiohttp import web

from adapters.console._http import ConsoleError, secure, signed_in
from adapters.console._streams import StreamGate
from adapters.console._surface import ConsoleSurface
from bot.serving import SIGN_IN

# EventSource reconnects on its own; this is how long it waits first.
RETRY_MILLISECONDS = 3000


class EventStream:
    """The SSE handler; one subscription per open stream, released on the way out."""

    def __init__(self, surface: ConsoleSurface, gate: StreamGate) -> None:
        self.surface = surface
        self.gate = gate

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        client = _client_key(request)
        refused = self.gate.enter(client)
        if refused is not None:
            # EventSource gives up on a non-200; the page retries on its own timer.
            raise ConsoleError(429, refused, retry_after_seconds=RETRY_MILLISECONDS // 1000)
        try:
            return await self._stream(request)
        finally:
            self.gate.leave(client)

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"X-Accel-Buffering": "no"})
        response.content_type = "text/event-stream"
        secure(response, api=True)
        subscription = self.surface.subscribe()
        try:
            await response.prepare(request)
            await response.write(f"retry: {RETRY_MILLISECONDS}\n\n".encode())
            while True:
                changed = await subscription.next(max_wait=self.surface.heartbeat_seconds)
                if changed is None or _gone(request):
                    break
                await response.write(encode_changed(changed) if changed else b": heartbeat\n\n")
        except ConnectionError:
            pass  # The page went away mid-write; nothing is owed to it.
        finally:
            self.surface.unsubscribe(subscription)
        return response


def _client_key(request: web.Request) -> str:
    # Behind a proxy every page shares the proxy's address, so where people sign
    # in the cap is per person; on an open loopback console it is per address.
    if request.app[SIGN_IN].required:
        return f"user:{signed_in(request)}"
    return f"addr:{request.remote or 'unknown'}"


def encode_changed(keys: list[str]) -> bytes:
    frames = (f"event: changed\ndata: {json.dumps({'conversation': key})}\n\n" for key in keys)
    return "".join(frames).encode()


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()
