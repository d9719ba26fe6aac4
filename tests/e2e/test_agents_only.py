"""A real `python -m bot` process with ``BOT_AGENT=none``: agents ask, chats get one sentence."""

from __future__ import annotations

import aiohttp
import pytest

from bot.service.delivering.messages import AGENTS_ONLY
from tests.e2e._api import Api, api_env, approval
from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, CHANNEL, SlackDriver, slack_bot
from tests.e2e._teams import TeamsDriver
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import FakeSlack, buttons, mention

pytestmark = pytest.mark.e2e


async def test_a_mention_gets_the_agents_only_sentence_and_an_agents_question_is_answered(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """A mention starts nothing and is told so; a /v1 question still posts and takes a click."""
    bot = await slack_bot(start_bot, fake, BOT_AGENT="none", **api_env("slack:*"))
    slack = SlackDriver(http, bot, fake)
    assert await slack.event(mention("deploy web", user=ALICE, ts="1.000100")) == 200
    told = (await slack.ephemeral(ALICE))[0]
    assert told.args["text"] == AGENTS_ONLY
    assert not [c for c in fake.of("chat.postMessage") if buttons(c.args)], "no demo question"

    api = Api(http, bot.url)
    created = await api.created(
        approval("agents-only", {"surface": "slack", "conversation": CHANNEL})
    )
    posted = await slack.question()
    status, _ = await slack.click(posted, "Approve")
    assert status == 200
    status, answered = await api.get(created["id"], wait=20)
    assert status == 200 and answered["answer"]["decision"] == "approve", answered
    assert "agent none" in bot.log_text()


async def test_a_console_message_gets_the_agents_only_sentence(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """A console chat message is refused with a 403 and the sentence; no run is listed."""
    bot = await start_bot(BOT_AGENT="none")
    async with http.post(
        f"{bot.url}/api/conversations/c1/messages", json={"text": "deploy web"}
    ) as response:
        assert response.status == 403
        assert (await response.json())["error"] == AGENTS_ONLY
    async with http.get(f"{bot.url}/api/conversations/c1") as response:
        assert (await response.json())["runs"] == []


async def test_a_teams_message_gets_the_agents_only_sentence(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """A Teams message is answered with the sentence and no card."""
    teams = TeamsDriver(http, await start_bot(BOT_AGENT="none"), connector)
    await teams.say("deploy web")
    assert await teams.replies(AGENTS_ONLY) == [AGENTS_ONLY]
    assert connector.cards() == []
