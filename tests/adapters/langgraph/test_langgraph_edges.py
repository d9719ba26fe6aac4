"""The adapter's edges: webhook resumes, interrupts not ours, misuse (that the server never loads
LangGraph is tests/adapters/test_agent_adapters_boundary.py's, with the other frameworks)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from adapters.langgraph import (
    ForeignInterrupt,
    NotInNode,
    QuestionChanged,
    Resumer,
    request_approval,
)
from bot.client import Bridge, InvalidWebhook
from tests.adapters.langgraph._graphs import Empty, Record, approval_graph
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, WEBHOOK_SECRET
from tests.e2e._client import APPROVE, ConsoleClient
from tests.e2e._server import free_port
from tests.loopback import serving


async def test_a_verified_webhook_resumes_the_thread_and_a_forged_one_is_refused(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """The answer's webhook resumes the parked thread once; a bad signature resumes nothing."""
    port = free_port()
    resumed: list[Any] = []
    arrived = asyncio.Event()
    url = f"http://127.0.0.1:{door.port}"
    async with Bridge(url, API_KEY) as bridge:
        record = Record()
        graph = approval_graph(
            bridge,
            record,
            route="console:lg-hook",
            answerers=["anyone"],
            callback_url=f"http://127.0.0.1:{port}/hook",
        )
        resumer = Resumer(graph, bridge)

        async def hook(request: web.Request) -> web.Response:
            body = await request.read()
            try:
                resumed.append(await resumer.on_webhook(WEBHOOK_SECRET, request.headers, body))
            except InvalidWebhook as exc:
                return web.json_response({"error": exc.message}, status=400)
            arrived.set()
            return web.Response(status=204)

        app = web.Application()
        app.router.add_post("/hook", hook)
        async with serving(app, port) as receiver:
            config: Any = {"configurable": {"thread_id": "t-hook"}}
            await graph.ainvoke({}, config)
            forged = {"webhook-id": "x", "webhook-timestamp": "1", "webhook-signature": "v1,x"}
            async with http.post(f"{receiver}/hook", data=b"{}", headers=forged) as r:
                assert r.status == 400
            assert record.done == []
            console = ConsoleClient(http, url)
            question = await console.outstanding("lg-hook", "approval")
            await console.answer_ok(question["token"], APPROVE)
            await asyncio.wait_for(arrived.wait(), 15)
        assert resumed[0]["outcomes"] == ["deploy:HumanApproved:"]
        assert record.done == ["deploy"]
        assert (await graph.aget_state(config)).interrupts == ()


async def test_an_interrupt_the_bridge_did_not_raise_is_left_to_its_owner(door: Door) -> None:
    """A node's own interrupt(): ForeignInterrupt names it, and nothing is asked."""

    async def own(state: Empty) -> Empty:
        return {"note": str(interrupt("Your own question?"))}

    builder = StateGraph(Empty)
    builder.add_node("own", own)
    builder.add_edge(START, "own")
    builder.add_edge("own", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    async with Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge:
        config: Any = {"configurable": {"thread_id": "t-own"}}
        with pytest.raises(ForeignInterrupt, match="did not raise"):
            await Resumer(graph, bridge).run({}, config)
        assert (await bridge.list()).data == []


async def test_a_node_that_asks_something_else_when_it_reruns_is_told_so(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """A summary that changes between runs: the re-ask is a 409, raised as QuestionChanged."""
    runs: list[int] = []
    url = f"http://127.0.0.1:{door.port}"
    async with Bridge(url, API_KEY) as bridge:

        async def drifting(state: Empty) -> Empty:
            runs.append(1)
            await request_approval(
                bridge,
                "deploy",
                f"Deploy, attempt {len(runs)}",
                arguments={},
                route="console:lg-drift",
                answerers=["anyone"],
            )
            return {}

        builder = StateGraph(Empty)
        builder.add_node("drifting", drifting)
        builder.add_edge(START, "drifting")
        builder.add_edge("drifting", END)
        graph = builder.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "t-drift"}}
        running = asyncio.create_task(Resumer(graph, bridge).run({}, config))
        console = ConsoleClient(http, url)
        question = await console.outstanding("lg-drift", "approval")
        await console.answer_ok(question["token"], APPROVE)
        with pytest.raises(QuestionChanged, match="same question"):
            await running


async def test_asking_outside_a_node_is_refused_with_a_sentence(door: Door) -> None:
    """request_approval outside a graph raises NotInNode before anything is asked."""
    async with Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge:
        with pytest.raises(NotInNode, match="inside a LangGraph node"):
            await request_approval(
                bridge, "deploy", "Deploy", arguments={}, route="console:x", answerers=["anyone"]
            )
        assert (await bridge.list()).data == []
