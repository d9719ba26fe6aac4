"""The MCP server against a real bridge process that is SIGKILLed between the ask and the answer."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e._api import API_KEY, Api, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._mcp import DEPLOY, structured
from tests.e2e._server import ROOT, BotServer, StartBot
from tests.e2e._slack import ALICE, CHANNEL, SlackDriver, slack_bot
from tests.fakes.slack_api import FakeSlack, buttons

pytestmark = pytest.mark.e2e


@contextlib.asynccontextmanager
async def mcp_stdio(
    bridge: BotServer, route: str, answerers: str, **env: str
) -> AsyncIterator[Client]:
    """`python -m bot mcp` as an MCP client starts it, asking ``bridge``."""
    keep = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bot", "mcp"],
        env={
            **keep,
            "PYTHONPATH": str(ROOT),
            "BOT_LOG_LEVEL": "WARNING",
            "BOT_MCP_BRIDGE_URL": bridge.url,
            "BOT_MCP_API_KEY": API_KEY,
            "BOT_MCP_ROUTE": route,
            "BOT_MCP_ANSWERERS": answerers,
            **env,
        },
        cwd=bridge.folder,
    )
    async with Client(params) as client:
        yield client


async def test_a_pending_call_spans_a_sigkill_and_returns_the_slack_click(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Ask, SIGKILL and restart the bridge, click Approve: the call returns it; one question."""
    bot = await slack_bot(start_bot, fake, **api_env("slack:*"))
    async with mcp_stdio(bot, f"slack:{CHANNEL}", ALICE, BOT_MCP_WAIT_SECONDS="600") as client:
        call = asyncio.create_task(client.call_tool("request_approval", DEPLOY))
        slack = SlackDriver(http, bot, fake)
        posted = await slack.question()
        bot.kill()
        await bot.restart()
        assert not call.done()
        status, _ = await slack.click(posted, "Approve")
        assert status == 200
        result = structured(await call)
    assert result["approved"] is True and result["decision"] == "approve"
    status, page = await Api(http, bot.url).call("GET", "/v1/questions")
    assert status == 200 and len(page["data"]) == 1, page
    assert len([c for c in fake.of("chat.postMessage") if buttons(c.args)]) == 1


async def test_an_open_question_survives_a_sigkill_and_get_answer_returns_it_once(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Wait 0: open; SIGKILL, restart; the retried call is the same question; get_answer answers."""
    bot = await start_bot(**api_env("console:*"), **OPERATOR)
    async with mcp_stdio(bot, "console:mcp-e2e", "anyone", BOT_MCP_WAIT_SECONDS="0") as client:
        first = structured(await client.call_tool("request_approval", DEPLOY))
        assert first["status"] == "open"
        bot.kill()
        await bot.restart()
        retried = structured(await client.call_tool("request_approval", DEPLOY))
        assert retried["question_id"] == first["question_id"]
        console = ConsoleClient(http, bot.url)
        asked = await console.outstanding("mcp-e2e", "approval")
        await console.answer_ok(asked["token"], APPROVE)
        answered = structured(
            await client.call_tool("get_answer", {"question_id": first["question_id"]})
        )
    assert answered["approved"] is True and answered["question_id"] == first["question_id"]
    status, page = await Api(http, bot.url).call("GET", "/v1/questions")
    assert status == 200 and len(page["data"]) == 1, page
