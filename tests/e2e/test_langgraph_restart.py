"""A LangGraph thread parked on the bridge survives a SIGKILL of the bridge and resumes once."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from adapters.langgraph import Resumer
from bot.client import Bridge
from tests.adapters.langgraph._graphs import Record, approval_graph
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot

pytestmark = pytest.mark.e2e


async def test_the_bridge_killed_between_ask_and_answer_the_run_resumes_once_asking_once(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Ask, SIGKILL, restart, answer: the waiting resumer resumes the node once, one question."""
    server = await start_bot(**api_env("console:*"), **OPERATOR)
    record = Record()
    async with Bridge(server.url, API_KEY) as bridge:
        graph = approval_graph(bridge, record, route="console:lg-crash", answerers=["anyone"])
        config: Any = {"configurable": {"thread_id": "t-crash"}}
        running = asyncio.create_task(Resumer(graph, bridge).run({}, config))
        console = ConsoleClient(http, server.url)
        before = await console.outstanding("lg-crash", "approval")
        assert record.runs == ["deploy"] and record.done == []

        server.kill()
        assert not running.done()  # the resumer's wait rides out the outage
        await server.restart()

        after = await console.outstanding("lg-crash", "approval")
        assert after["token"] == before["token"], "still the one question, open in chat"
        await console.answer_ok(after["token"], APPROVE)
        result = await asyncio.wait_for(running, 60)
        assert result["outcomes"] == ["deploy:HumanApproved:"]
        assert record.runs == ["deploy", "deploy"], "parked once, resumed once"
        assert record.done == ["deploy"], "the side effect ran exactly once"
        questions = (await bridge.list()).data
        assert len(questions) == 1, "the re-run asked no second question"
        assert questions[0].status == "answered"
        assert (await graph.aget_state(config)).interrupts == ()
