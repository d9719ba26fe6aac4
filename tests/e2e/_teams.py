"""Teams activities as the channel sends them, and the bot's real app on a loopback port."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.app import create_app
from bot.app.settings import load_settings
from tests.card_library import card_problems
from tests.e2e._server import BotServer, free_port
from tests.fakes.bf_connector import Call, FakeConnector

BOT = {"id": "28:bot-app-id", "name": "Ops bot"}
# As Teams sends them: the tenant and each person's AAD object id are lowercase dashed GUIDs.
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
ALICE = {"id": "29:alice", "name": "Alice", "aadObjectId": "a11ce000-0000-4000-8000-000000000001"}
BOB = {"id": "29:bob", "name": "Bob", "aadObjectId": "b0b00000-0000-4000-8000-000000000002"}
PERSONAL = "a:1personal-alice"
CHANNEL = "19:ops-channel@thread.tacv2"
QUESTION = "Which environment should I deploy web in?"
DEPLOY_REPORT = "Deployed web 1.5.0 to staging (was 1.4.2). Health checks green."

_ids = itertools.count(1)


@asynccontextmanager
async def checked_connector() -> AsyncIterator[FakeConnector]:
    """The loopback Bot Framework connector (and its token and OpenID endpoints); at the end,
    every card the bot sent must parse and validate in Microsoft's Adaptive Cards library."""
    fake = await FakeConnector().start()
    try:
        yield fake
    finally:
        await fake.close()
    problems = await card_problems(fake.sent_cards())
    assert problems == {}, f"Teams would not read these cards as sent: {problems}"


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


# The inputs a card can hold, by the element type Teams draws for each.
_INPUTS = ("Input.Text", "Input.ChoiceSet", "Input.Number", "Input.Toggle", "Input.Date")


def submitted(
    card: dict[str, Any], title: str, typed: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The data Teams sends for the Action.Execute called ``title``: the action's data merged
    with the card's input values (as drawn, or as ``typed`` by input id). Like Microsoft's
    renderer, an input left empty is not sent at all."""
    action = next(a for a in actions(card) if a["title"] == title)
    values = {
        str(element["id"]): str(element.get("value", ""))
        for kind in _INPUTS
        for element in elements(card, kind)
    }
    values.update(typed or {})
    return {**action["data"], **{key: value for key, value in values.items() if value}}


class TeamsDriver:
    """Sends what Teams sends to a real bot process (emulator mode: no channel token) and
    reads what the bot sent from the loopback connector."""

    def __init__(
        self, http: aiohttp.ClientSession, bot: BotServer, connector: FakeConnector
    ) -> None:
        self.http = http
        self.bot = bot
        self.connector = connector

    async def post(self, activity: dict[str, Any]) -> tuple[int, Any]:
        async with self.http.post(f"{self.bot.url}/api/messages", json=activity) as reply:
            text = await reply.text()
            return reply.status, json.loads(text) if text else None

    async def say(self, text: str, **where: Any) -> None:
        status, _ = await self.post(message(self.connector.url, text, **where))
        assert status == 201

    async def card(self, count: int = 1) -> Call:
        """The ``count``-th card the bot posted."""
        cards: list[Call] = await self.connector.wait_for(
            lambda: self.connector.cards()[count - 1 :], what=f"card {count}"
        )
        return cards[0]

    async def click(
        self,
        posted: Call,
        title: str,
        typed: Mapping[str, str] | None = None,
        *,
        who: dict[str, str] = ALICE,
        conversation: str = PERSONAL,
        kind: str = "personal",
    ) -> dict[str, Any]:
        """Press ``title`` on the posted card, with ``typed`` in its inputs (by id): the card
        the invoke's answer puts in its place."""
        data = submitted(card_of(posted.body), title, typed)
        return await self.invoke(posted, data, who=who, conversation=conversation, kind=kind)

    async def invoke(
        self,
        posted: Call,
        data: dict[str, Any],
        *,
        who: dict[str, str] = ALICE,
        conversation: str = PERSONAL,
        kind: str = "personal",
    ) -> dict[str, Any]:
        """An Action.Execute on the card posted in ``conversation`` carrying ``data``: the
        card in its place."""
        activity = execute(
            self.connector.url,
            data,
            who=who,
            conversation=conversation,
            kind=kind,
            reply_to=posted.activity_id,
        )
        status, reply = await self.post(activity)
        assert status == 200, reply
        assert reply["type"] == "application/vnd.microsoft.card.adaptive", reply
        self.connector.replied.append(reply["value"])
        return dict(reply["value"])

    async def approval(self) -> Call:
        """Alice asks the demo to deploy web and picks staging: the approval's card."""
        await self.say("deploy web")
        await self.click(await self.card(), "staging")
        return await self.card(2)

    async def closed(self, posted: Call) -> dict[str, Any]:
        """The card ``posted`` became once its question closed (its last edit)."""
        updates = await self.connector.wait_for(
            lambda: self.connector.updates(posted.activity_id), what="the card's edit"
        )
        return card_of(updates[-1].body)

    async def replies(self, starting: str) -> list[str]:
        """Every plain message the bot posted that starts with ``starting`` (at least one)."""
        found: list[str] = await self.connector.wait_for(
            lambda: [t for t in self.connector.texts() if t.startswith(starting)],
            what=f"a reply starting {starting!r}",
        )
        return found


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
