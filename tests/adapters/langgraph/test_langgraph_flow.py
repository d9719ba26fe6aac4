"""LangGraph nodes ask through the real bridge app; answers in the console and Slack resume them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from adapters.langgraph import HumanAnswered, Resumer, ask_human, request_approval
from bot.client import Bridge
from tests.adapters.langgraph._graphs import Empty, Record, approval_graph
from tests.doors._doors import Door
from tests.doors._slack_door import slack_door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, ConsoleClient
from tests.e2e._slack import ALICE, CHANNEL, SlackDriver

REJECT = {"decision": "reject", "comment": "not on a Friday"}
PAGE = (Path(__file__).resolve().parents[3] / "docs" / "agents" / "langgraph.md").read_text()


def url_of(door: Door) -> str:
    return f"http://127.0.0.1:{door.port}"


async def outstanding(console: ConsoleClient, cid: str, count: int) -> list[dict[str, Any]]:
    """The conversation's ``count`` open approvals, once all of them are there."""

    def check(feed: dict[str, Any]) -> list[dict[str, Any]] | None:
        found = [
            q
            for run in feed.get("runs", [])
            for q in run.get("questions", [])
            if q["status"] == "outstanding" and q.get("token")
        ]
        return found if len(found) == count else None

    return await console.wait(cid, check, what=f"{count} open approvals")


@dataclass
class Parked:
    """An approval node's graph resuming on a task of its own, parked on its console question:
    the bridge client it asks through, and the record of its side effects."""

    bridge: Bridge
    record: Record
    graph: Any
    config: Any
    running: asyncio.Task[Any]
    console: ConsoleClient
    question: dict[str, Any]

    async def answered(self, answer: dict[str, Any]) -> Any:
        """Give the console question ``answer``: what the resumed graph returns."""
        await self.console.answer_ok(self.question["token"], answer)
        return await self.running


@asynccontextmanager
async def parked_in_console(
    door: Door, http: aiohttp.ClientSession, *, cid: str, thread: str
) -> AsyncIterator[Parked]:
    """``approval_graph`` asking in console conversation ``cid`` on thread ``thread`` through a
    bridge client open for the block, run by a ``Resumer`` until the question it asked is
    open on the console."""
    record = Record()
    async with Bridge(url_of(door), API_KEY) as bridge:
        graph = approval_graph(bridge, record, route=f"console:{cid}", answerers=["anyone"])
        config: Any = {"configurable": {"thread_id": thread}}
        running = asyncio.create_task(Resumer(graph, bridge).run({}, config))
        console = ConsoleClient(http, url_of(door))
        question = await console.outstanding(cid, "approval")
        yield Parked(bridge, record, graph, config, running, console, question)


async def test_an_approval_in_the_console_resumes_the_node_and_runs_its_side_effect(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """The node parks; approve in the console; it re-runs once, asks nothing new, and acts."""
    async with parked_in_console(door, http, cid="lg-1", thread="t-console") as parked:
        assert parked.record.done == []  # parked before the side effect
        state = await parked.graph.aget_state(parked.config)
        assert [i.value["question_id"] for i in state.interrupts] != []
        result = await parked.answered(APPROVE)
        assert result["outcomes"] == ["deploy:HumanApproved:"]
        assert parked.record.done == ["deploy"]
        assert parked.record.runs == ["deploy", "deploy"]  # re-ran on resume, as LangGraph does
        page = await parked.bridge.list()
        assert len(page.data) == 1, "the re-run asked no second question"
        assert page.data[0].metadata is not None
        assert page.data[0].metadata["langgraph"]["thread_id"] == "t-console"
        assert (await parked.graph.aget_state(parked.config)).interrupts == ()


async def test_a_node_approval_allows_approve_and_reject_where_the_bridge_allows_edits(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    """docs/agents/langgraph.md's sentence: on a bridge that lets approvers edit, a node's
    question still allows approve and reject only; an edit is refused, an approval resumes."""
    assert "`request_approval` allows approve and reject only, whatever the" in PAGE
    env = api_env("console:*") | {"BOT_ALLOW": "approval=approve,reject,edit,respond"}
    async with (
        Door(tmp_path, **env) as door,
        parked_in_console(door, http, cid="lg-allow", thread="t-allow") as parked,
    ):
        edit = {"decision": "edit", "arguments": {"service": "web", "version": "1.4"}}
        status, refused = await parked.console.answer(parked.question["token"], edit)
        assert status != 200 and "edit is not allowed here" in str(refused), refused
        assert parked.record.done == []
        result = await parked.answered(APPROVE)
        assert result["outcomes"] == ["deploy:HumanApproved:"]
        assert parked.record.done == ["deploy"]


async def test_a_rejection_reaches_the_node_and_the_side_effect_does_not_run(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """Reject with a comment: the node gets HumanRejected with that comment, and does nothing."""
    async with parked_in_console(door, http, cid="lg-2", thread="t-reject") as parked:
        result = await parked.answered(REJECT)
        assert result["outcomes"] == ["deploy:HumanRejected:not on a Friday"]
        assert parked.record.done == []


async def test_two_approvals_in_one_step_are_two_questions_and_only_the_approved_runs(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """Two nodes park in one step: two questions; approve one, reject the other, by interrupt id."""
    record = Record()
    async with Bridge(url_of(door), API_KEY) as bridge:
        graph = approval_graph(
            bridge,
            record,
            route="console:lg-3",
            answerers=["anyone"],
            actions=("migrate", "restart"),
        )
        config: Any = {"configurable": {"thread_id": "t-two"}}
        resumer = Resumer(graph, bridge)
        await graph.ainvoke({}, config)
        pending = await resumer.pending(config)
        assert len(pending) == 2
        assert len({p.interrupt_id for p in pending}) == 2
        by_action = {p.questions[0].object.payload["action"]: p for p in pending}
        assert set(by_action) == {"migrate", "restart"}
        console = ConsoleClient(http, url_of(door))
        questions = await outstanding(console, "lg-3", 2)
        tokens = {q["payload"]["action"]: q["token"] for q in questions}
        await console.answer_ok(tokens["restart"], REJECT)
        await console.answer_ok(tokens["migrate"], APPROVE)
        result = await resumer.resume(config)
        assert sorted(result["outcomes"]) == [
            "migrate:HumanApproved:",
            "restart:HumanRejected:not on a Friday",
        ]
        assert record.done == ["migrate"]
        assert len((await bridge.list()).data) == 2
        assert await resumer.resume(config) is None  # nothing left to resume


async def test_a_slack_click_resumes_the_node(tmp_path: Path, http: aiohttp.ClientSession) -> None:
    """Routed to a Slack channel through the loopback Web API; Alice's Approve click resumes it."""
    async with slack_door(tmp_path, **api_env("slack:*")) as door:
        record = Record()
        async with Bridge(url_of(door), API_KEY) as bridge:
            graph = approval_graph(bridge, record, route=f"slack:{CHANNEL}", answerers=[ALICE])
            config: Any = {"configurable": {"thread_id": "t-slack"}}
            running = asyncio.create_task(Resumer(graph, bridge).run({}, config))
            slack = SlackDriver(http, SimpleNamespace(url=url_of(door)), door.fake)
            posted = await slack.question()
            status, _ = await slack.click(posted, "Approve")
            assert status == 200
            result = await running
            assert result["outcomes"] == ["deploy:HumanApproved:"]
            assert record.done == ["deploy"]
            answered = (await bridge.list()).data
            assert len(answered) == 1 and answered[0].answered_by is not None
            assert answered[0].answered_by.id.endswith(f":{ALICE}")


async def test_two_asks_in_one_node_and_one_in_a_subgraph_each_get_their_own_answer(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """ask_human then request_approval in a subgraph's node: two pauses, each answered in turn."""
    seen: list[Any] = []
    async with Bridge(url_of(door), API_KEY) as bridge:

        async def plan(state: Empty) -> Empty:
            reply = await ask_human(
                bridge, "Which environment?", route="console:lg-seq", answerers=["anyone"]
            )
            assert isinstance(reply, HumanAnswered)
            where = str(reply.answers["Which environment?"])
            decision = await request_approval(
                bridge,
                "deploy",
                f"Deploy web to {where}",
                arguments={"environment": where},
                route="console:lg-seq",
                answerers=["anyone"],
            )
            seen.append((where, type(decision).__name__))
            return {"note": f"{where}:{type(decision).__name__}"}

        inner = StateGraph(Empty)
        inner.add_node("plan", plan)
        inner.add_edge(START, "plan")
        inner.add_edge("plan", END)
        outer = StateGraph(Empty)
        outer.add_node("inner", inner.compile())
        outer.add_edge(START, "inner")
        outer.add_edge("inner", END)
        graph = outer.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "t-seq"}}
        running = asyncio.create_task(Resumer(graph, bridge).run({}, config))
        console = ConsoleClient(http, url_of(door))
        asked = await console.outstanding("lg-seq", "ask_user")
        await console.answer_ok(asked["token"], {"answers": {"Which environment?": "staging"}})
        approval = await console.outstanding("lg-seq", "approval")
        assert approval["payload"]["arguments"] == {"environment": "staging"}
        await console.answer_ok(approval["token"], APPROVE)
        result = await running
        assert result["note"] == "staging:HumanApproved"
        assert seen == [("staging", "HumanApproved")]
        assert len((await bridge.list()).data) == 2


async def test_two_resumers_racing_for_one_thread_resume_it_once(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """Two concurrent resume() calls on one thread: one resumes, the other finds nothing left."""
    record = Record()
    async with Bridge(url_of(door), API_KEY) as bridge:
        graph = approval_graph(bridge, record, route="console:lg-race", answerers=["anyone"])
        config: Any = {"configurable": {"thread_id": "t-race"}}
        resumer = Resumer(graph, bridge)
        await graph.ainvoke({}, config)
        racing = [asyncio.create_task(resumer.resume(config)) for _ in range(2)]
        console = ConsoleClient(http, url_of(door))
        question = await console.outstanding("lg-race", "approval")
        await console.answer_ok(question["token"], APPROVE)
        results = await asyncio.gather(*racing)
        assert sorted(map(str, results)) == ["None", str({"outcomes": ["deploy:HumanApproved:"]})]
        assert record.done == ["deploy"]
        assert record.runs == ["deploy", "deploy"]
