"""Drive a real bot process as Slack would: signed events and interactions over HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from tests.e2e._server import BotServer, StartBot
from tests.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    Call,
    FakeSlack,
    action_of,
    block_actions,
    buttons,
    event_callback,
    form_body,
    mention,
    posted_message,
    sign,
    view_submission,
)

ALICE = "U0ALICE"
BOB = "U0BOB"
CHANNEL = "C0CHAN"


@asynccontextmanager
async def checked_slack() -> AsyncIterator[FakeSlack]:
    """The loopback Slack Web API, answering as Slack does; at the end, nothing the bot
    sent may have been refused for its Block Kit (``FakeSlack.refused``)."""
    slack = await FakeSlack().start()
    try:
        yield slack
    finally:
        await slack.close()
    assert slack.refused == [], f"Slack would refuse what the bot sent: {slack.refused}"


async def slack_bot(start_bot: StartBot, fake: FakeSlack, **env: str) -> BotServer:
    return await start_bot(
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=fake.api_url,
        **env,
    )


class SlackDriver:
    """Sends what Slack sends, signed; reads what the bot sent from the fake Web API."""

    def __init__(self, session: aiohttp.ClientSession, bot: BotServer, fake: FakeSlack) -> None:
        self.session = session
        self.bot = bot
        self.fake = fake

    async def post(
        self, body: str, *, content_type: str, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        sent = {"Content-Type": content_type, **sign(body), **(headers or {})}
        async with self.session.post(
            f"{self.bot.url}/slack/events", data=body.encode(), headers=sent
        ) as response:
            return response.status, await response.text()

    async def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry: int | None = None
    ) -> int:
        body = json.dumps(event_callback(event, event_id=event_id))
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        status, _ = await self.post(
            body, content_type="application/json", headers=headers if retry else None
        )
        return status

    async def interact(self, payload: dict[str, Any]) -> tuple[int, str]:
        return await self.post(form_body(payload), content_type="application/x-www-form-urlencoded")

    async def question(self, count: int = 1) -> Call:
        """The ``count``-th posted message that has buttons."""
        calls = await self.fake.wait_for(
            "chat.postMessage", count, where=lambda c: bool(buttons(c.args) and c.response)
        )
        return calls[count - 1]

    async def approval(self) -> Call:
        """Alice asks to deploy web and picks staging: the approval question posted next."""
        await self.event(mention("deploy web", user=ALICE))
        status, _ = await self.click(await self.question(), "staging")
        assert status == 200
        return await self.question(2)

    async def click(
        self,
        question: Call,
        label: str,
        *,
        user: str = ALICE,
        value: str | None = None,
        channel: str = CHANNEL,
    ) -> tuple[int, str]:
        return await self.interact(
            self.clicked(question, label, user=user, value=value, channel=channel)
        )

    @staticmethod
    def clicked(
        question: Call,
        label: str,
        *,
        user: str = ALICE,
        value: str | None = None,
        channel: str = CHANNEL,
    ) -> dict[str, Any]:
        """The ``block_actions`` payload of ``user`` pressing ``label`` on the posted message."""
        button = next(b for b in buttons(question.args) if b["text"]["text"] == label)
        action = action_of(button)
        if value is not None:
            action["value"] = value
        return block_actions(action, user=user, message=posted_message(question), channel=channel)

    async def opened(
        self, question: Call, label: str, *, user: str = ALICE, channel: str = CHANNEL
    ) -> dict[str, Any]:
        """Press ``label`` (a button that opens a modal): the view the bot opened on that
        click's trigger, as Slack holds it. Fails at once if the person is told something
        instead."""
        payload = self.clicked(question, label, user=user, channel=channel)
        clicked_at = time.monotonic()
        status, _ = await self.interact(payload)
        assert status == 200

        def outcome(call: Call) -> bool:
            if call.method == "views.open":
                return bool(call.args.get("trigger_id") == payload["trigger_id"])
            told = call.args.get("user") == user and call.args.get("channel") == channel
            return told and call.at >= clicked_at

        call = (await self.fake.wait_for(("views.open", "chat.postEphemeral"), where=outcome))[0]
        assert call.method == "views.open", f"no modal; {user} was told {call.args.get('text')!r}"
        view: dict[str, Any] = call.args["view"]
        return view

    async def submit(
        self, view: dict[str, Any], values: dict[str, Any], *, user: str = ALICE
    ) -> tuple[int, str]:
        return await self.interact(view_submission(view, values, user=user))

    async def edits_of(self, question: Call, count: int = 1) -> list[Call]:
        ts = question.response["ts"]
        return await self.fake.wait_for("chat.update", count, where=lambda c: c.args["ts"] == ts)

    async def ephemeral(self, user: str, count: int = 1) -> list[Call]:
        return await self.fake.wait_for(
            "chat.postEphemeral", count, where=lambda c: c.args["user"] == user
        )

    async def reply(self, containing: str) -> Call:
        calls = await self.fake.wait_for(
            "chat.postMessage",
            where=lambda c: not buttons(c.args) and containing in str(c.args.get("text")),
        )
        return calls[0]


def text_of(call: Call) -> str:
    """All the text of a posted or updated message, blocks included."""
    return json.dumps(call.args.get("blocks", []), ensure_ascii=False) + str(call.args.get("text"))
