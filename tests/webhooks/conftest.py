"""A real loopback receiver that verifies each webhook with the standardwebhooks package."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from bot.webhooks import WebhookSettings, random_webhook_secret


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    verified: object  # the parsed event, or the verification error


@dataclass
class Receiver:
    """Answers each request with the next scripted status (200 when the script is spent)."""

    secret: str
    port: int = 0
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    hang: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, host: str = "127.0.0.1", path: str = "/hooks?token=receiver-token") -> str:
        return f"http://{host}:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = dict(request.headers)
        verified: object
        try:
            verified = Webhook(self.secret).verify(body, headers)
        except WebhookVerificationError as error:
            verified = error
        self.received.append(Received(headers, body, verified))
        if self.hang:
            await self.release.wait()
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200)


@pytest.fixture
def secret() -> str:
    return random_webhook_secret()


@pytest.fixture
def settings(secret: str) -> WebhookSettings:
    # The receiver is on loopback: only the SSRF tests turn private targets off.
    return WebhookSettings(BOT_WEBHOOK_SECRET=secret, BOT_WEBHOOK_ALLOW_PRIVATE=True)


@pytest.fixture
async def receiver(secret: str) -> AsyncIterator[Receiver]:
    found = Receiver(secret)
    app = web.Application()
    app.router.add_post("/hooks", found.handle)
    runner = web.AppRunner(app, access_log=None)  # the receiver's log is not ours to check
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.Server)
    found.port = server.sockets[0].getsockname()[1]
    try:
        yield found
    finally:
        found.release.set()
        await runner.cleanup()
