"""The agents API as a test drives it: a key, raw requests, and a webhook receiver."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from standardwebhooks.webhooks import Webhook

from tests.loopback import serving

API_KEY = "k" * 40
WEBHOOK_SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def api_env(*routes: str, **more: str) -> dict[str, str]:
    keys = [{"name": "ci", "key": API_KEY, "routes": list(routes) or ["*"]}]
    return {
        "BOT_API_KEYS": json.dumps(keys),
        "BOT_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "BOT_WEBHOOK_ALLOW_PRIVATE": "true",
        **more,
    }


class Api:
    """Raw ``/v1`` calls with the test key: (status, JSON body)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, key: str = API_KEY) -> None:
        self.session = session
        self.url = url
        self.headers = {"Authorization": f"Bearer {key}"}

    async def call(
        self, method: str, path: str, body: Any = None, **params: Any
    ) -> tuple[int, dict[str, Any]]:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body))
        headers = {**self.headers, "Content-Type": "application/json"}
        async with self.session.request(
            method, f"{self.url}{path}", data=data, headers=headers, params=params or None
        ) as response:
            return response.status, await response.json()

    async def ask(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return await self.call("POST", "/v1/questions", body)

    async def created(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST a question that must be new: the 201's body."""
        status, created = await self.ask(body)
        assert status == 201, created
        return created

    async def get(self, question_id: str, wait: int = 0) -> tuple[int, dict[str, Any]]:
        return await self.call("GET", f"/v1/questions/{question_id}", wait=wait)


def approval(idempotency_key: str, route: dict[str, str], **more: Any) -> dict[str, Any]:
    return {
        "idempotency_key": idempotency_key,
        "kind": "approval",
        "payload": {"action": "deploy", "summary": "Deploy web 1.5 to prod", "risk": "high"},
        "route": route,
        "answerers": ["anyone"],
        **more,
    }


@dataclass
class Receiver:
    """A webhook target on loopback that verifies with ``standardwebhooks``, not our signer."""

    url: str
    # Answer these statuses first (one per request), then 200.
    failures: list[int] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    # Each request's traceparent header ('' without one): the trace the bridge carried on.
    traceparents: list[str] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)


@asynccontextmanager
async def webhook_receiver(
    port: int, *, failures: list[int] | None = None
) -> AsyncIterator[Receiver]:
    receiver = Receiver(f"http://127.0.0.1:{port}/hook", failures=list(failures or []))
    verifier = Webhook(WEBHOOK_SECRET)

    async def hook(request: web.Request) -> web.Response:
        body = await request.read()
        event = verifier.verify(body, dict(request.headers))  # raises if forged
        receiver.ids.append(request.headers["webhook-id"])
        receiver.traceparents.append(request.headers.get("traceparent", ""))
        if receiver.failures:
            return web.Response(status=receiver.failures.pop(0))
        receiver.events.append(dict(event))
        receiver.arrived.set()
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    async with serving(app, port):
        yield receiver
