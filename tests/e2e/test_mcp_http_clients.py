"""The MCP SDK's own clients against ``/mcp`` on a real ``python -m bot``, over loopback.

In another process, a body often arrives after its headers, which an
in-process server rarely sees; that is where ``/mcp`` once parsed an empty
body.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import httpx2
import pytest
from mcp import Client, ClientSession
from mcp.client.client import ConnectMode
from mcp.client.streamable_http import streamable_http_client

from tests.e2e import _mcp
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._mcp import structured
from tests.e2e._server import BotServer, StartBot

pytestmark = pytest.mark.e2e

CONVERSATION = "mcp-http"
ON = {
    "BOT_MCP_HTTP": "true",
    "BOT_MCP_ROUTE": f"console:{CONVERSATION}",
    "BOT_MCP_ANSWERERS": "anyone",
}
TOOLS = {"ask_human", "request_approval", "get_answer"}
# The same request_key each time: every call is the one open question, handed back at once.
DEPLOY = {**_mcp.DEPLOY, "request_key": "clients"}
RUNS = 50


@pytest.fixture
async def bot(start_bot: StartBot) -> BotServer:
    return await start_bot(**api_env("console:*"), **ON, **OPERATOR, BOT_MCP_WAIT_SECONDS="0")


@pytest.fixture
async def keyed() -> AsyncIterator[httpx2.AsyncClient]:
    """An httpx2 client carrying the bearer key, as the SDK's transport takes one."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {API_KEY}"}) as client:
        yield client


async def test_the_sdk_session_initializes_lists_and_calls_50_times_in_a_row(
    bot: BotServer, keyed: httpx2.AsyncClient
) -> None:
    """ClientSession over streamable_http_client: initialize, list_tools, call_tool, 50 of 50."""
    asked: set[str] = set()
    for _ in range(RUNS):
        async with (
            streamable_http_client(f"{bot.url}/mcp", http_client=keyed) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS
            result = structured(await session.call_tool("request_approval", DEPLOY))
            assert result["status"] == "open", result
            asked.add(result["question_id"])
    assert len(asked) == 1, asked


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_asks_and_returns_the_console_answer(
    bot: BotServer, keyed: httpx2.AsyncClient, mode: ConnectMode
) -> None:
    """Client(streamable_http_client) (2026 and 2025-era): lists 10 times, then an approval."""
    url = f"{bot.url}/mcp"
    for _ in range(10):
        async with Client(streamable_http_client(url, http_client=keyed), mode=mode) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
    async with Client(streamable_http_client(url, http_client=keyed), mode=mode) as client:
        opened = structured(
            await client.call_tool("request_approval", DEPLOY | {"request_key": mode})
        )
        assert opened["status"] == "open"
        async with aiohttp.ClientSession() as session:
            console = ConsoleClient(session, bot.url)
            asked = await console.outstanding(CONVERSATION, "approval")
            await console.answer_ok(asked["token"], APPROVE)
        answered = structured(
            await client.call_tool("get_answer", {"question_id": opened["question_id"]})
        )
    assert answered["approved"] is True and answered["question_id"] == opened["question_id"]


async def test_ten_clients_at_once_each_list_the_tools(
    bot: BotServer, keyed: httpx2.AsyncClient
) -> None:
    """Ten clients at once on one bridge: every one lists the three tools."""

    async def one() -> set[str]:
        async with Client(streamable_http_client(f"{bot.url}/mcp", http_client=keyed)) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert await asyncio.gather(*(one() for _ in range(10))) == [TOOLS] * 10
