"""The Slack door in process: signed (or not) raw requests to ``/slack/events``."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.doors._doors import Door
from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack, slash_command

ADMIN = "U0BOB"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def signed(body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    """Slack's two headers for ``body`` (bytes: any body, UTF-8 or not)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(SIGNING_SECRET.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest.hexdigest()}"}


def command_form(text: str, *, user: str = ADMIN, **fields: str) -> bytes:
    return slash_command(text, user=user, **fields).encode()


def interaction(payload: Any) -> bytes:
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


class SlackDoor(Door):
    fake: FakeSlack

    async def idle(self) -> None:
        """Runs settled, and the listeners' after-ack work (ephemerals, modals) done too."""
        bridge = next(
            r.handler.__self__  # type: ignore[attr-defined]
            for r in self.app.router.routes()
            if getattr(r.handler, "__name__", "") == "_events"
        )
        for _ in range(100):
            await super().idle()
            tasks = list(bridge.listeners._tasks)
            if not tasks:
                return
            await asyncio.wait(tasks)

    async def slack(
        self, body: bytes, content_type: str = JSON, *, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        sent = {"Content-Type": content_type, **signed(body), **(headers or {})}
        return await self.send("/slack/events", body, headers=sent)


@asynccontextmanager
async def slack_door(folder: Path, **env: Any) -> AsyncIterator[SlackDoor]:
    fake = await FakeSlack().start()
    try:
        door = SlackDoor(
            folder,
            SLACK_BOT_TOKEN=BOT_TOKEN,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_URL=fake.api_url,
            BOT_ADMINS=f"slack:{TEAM}:{ADMIN}",
            **env,
        )
        door.fake = fake
        door.outbound = fake.calls
        async with door:
            yield door
    finally:
        await fake.close()
