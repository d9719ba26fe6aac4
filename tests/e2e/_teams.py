"""Teams activities as the channel sends them, and the bot's real app on a loopback port."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.app import create_app
from bot.app.settings import load_settings
from tests.e2e._server import free_port

BOT = {"id": "28:bot-app-id", "name": "Ops bot"}
TENANT = "72f988bf-tenant"
ALICE = {"id": "29:alice", "name": "Alice", "aadObjectId": "aad-alice"}
BOB = {"id": "29:bob", "name": "Bob", "aadObjectId": "aad-bob"}
PERSONAL = "a:1personal-alice"
CHANNEL = "19:ops-channel@thread.tacv2"
QUESTION = "Which environment should I deploy web in?"
DEPLOY_REPORT = "Deployed web 1.5.0 to staging (was 1.4.2). Health checks green."

_ids = itertools.count(1)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def message(
    service_url: str,
    text: str,
    *,
    who: dict[str, str] = ALICE,
    conversation: str = PERSONAL,
    kind: str = "personal",
    mention: bool = False,
    activity_id: str | None = None,
) -> dict[str, Any]:
    activity_id = activity_id or f"msg-{next(_ids)}"
    activity = _from_user("message", activity_id, service_url, who, conversation, kind)
    activity["text"] = text
    if mention:
        activity["text"] = f"<at>{BOT['name']}</at> {text}"
        activity["entities"] = [
            {"type": "mention", "mentioned": BOT, "text": f"<at>{BOT['name']}</at>"}
        ]
    return activity


def execute(
    service_url: str,
    data: dict[str, Any],
    *,
    who: dict[str, str] = ALICE,
    conversation: str = PERSONAL,
    kind: str = "personal",
    reply_to: str = "",
) -> dict[str, Any]:
    """The ``adaptiveCard/action`` invoke Teams sends for an Action.Execute."""
    return {
        **_from_user("invoke", f"inv-{next(_ids)}", service_url, who, conversation, kind),
        "name": "adaptiveCard/action",
        "replyToId": reply_to,
        "value": {"action": {"type": "Action.Execute", "verb": "answer", "data": data}},
    }


def _from_user(
    kind_of_activity: str,
    activity_id: str,
    service_url: str,
    who: dict[str, str],
    conversation: str,
    kind: str,
) -> dict[str, Any]:
    """What every activity a person in the tenant sends carries: who, to the bot, where."""
    return {
        "type": kind_of_activity,
        "id": activity_id,
        "channelId": "msteams",
        "serviceUrl": service_url,
        "from": who,
        "recipient": BOT,
        "conversation": {"id": conversation, "conversationType": kind, "tenantId": TENANT},
        "channelData": {"tenant": {"id": TENANT}},
    }


def actions(card: dict[str, Any]) -> list[dict[str, Any]]:
    return list(card.get("actions", []))


def card_of(body: dict[str, Any]) -> dict[str, Any]:
    """The Adaptive Card in a posted activity."""
    return dict(body["attachments"][0]["content"])


def read(markdown: str) -> str:
    """A TextBlock's text as a person reads it: CommonMark's backslash escapes taken out."""
    return _ESCAPED.sub(r"\1", markdown)


def texts(card: dict[str, Any]) -> list[str]:
    """Every TextBlock's text in a card as a person reads it, in order (nested containers
    included); the official renderer's own reading is tests/adapters/teams/test_renderer.py."""
    return [read(str(block.get("text", ""))) for block in elements(card, "TextBlock")]


def elements(card: dict[str, Any], kind: str) -> Iterator[dict[str, Any]]:
    """Every element of type ``kind`` in a card's body, in document order (nested containers
    included)."""

    def walk(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == kind:
                yield node
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    yield from walk(card.get("body", []))


StartApp = Callable[..., Awaitable["TeamsBotApp"]]


class TeamsBotApp:
    """``create_app`` served on 127.0.0.1, talked to over real HTTP."""

    def __init__(self, folder: Path, **overrides: Any) -> None:
        # The port is known up front: the app accepts only its own host and port.
        port = free_port()
        self.folder = folder
        settings = load_settings(
            DATABASE_URL=f"sqlite:///{folder / 'bot.sqlite3'}",
            BOT_DATA_DIR=folder / "var",
            BOT_CONSOLE=False,
            PORT=port,
            **overrides,
        )
        self.app: web.Application = create_app(settings)
        self.server = TestServer(self.app, host="127.0.0.1", port=port)
        self.session: aiohttp.ClientSession | None = None

    async def start(self) -> TeamsBotApp:
        await self.server.start_server()
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20))
        return self

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
        await self.server.close()

    async def post(
        self, activity: Any, *, headers: dict[str, str] | None = None, raw: bytes | None = None
    ) -> tuple[int, Any]:
        assert self.session is not None
        url = str(self.server.make_url("/api/messages"))
        sent = {"Content-Type": "application/json", **(headers or {})}
        kwargs: dict[str, Any] = {"data": raw} if raw is not None else {"json": activity}
        if raw is None:
            sent.pop("Content-Type")
        async with self.session.post(url, headers=sent, **kwargs) as response:
            text = await response.text()
            try:
                return response.status, json.loads(text) if text else None
            except ValueError:
                return response.status, text
