"""LangChain's HumanInTheLoopMiddleware, answered through the bridge: both interrupt modes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import aiohttp
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from adapters.langgraph import Resumer, UnsupportedReview
from bot.client import Bridge
from tests.doors._doors import Door
from tests.e2e._api import API_KEY
from tests.e2e._client import APPROVE, ConsoleClient

KEEP = {"decision": "reject", "comment": "Keep the report."}


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, told it may call tools (it replays its script regardless)."""

    def bind_tools(self, tools: Sequence[Any], **_: Any) -> Any:
        return self


def agent_with(ran: list[str], interrupt_on: dict[str, Any], **middleware: Any) -> Any:
    @tool
    def send_email(to: str) -> str:
        """Send the report to someone."""
        ran.append(f"send_email:{to}")
        return f"sent to {to}"

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(f"delete_file:{path}")
        return f"deleted {path}"

    turn = AIMessage(
        content="",
        tool_calls=[
            {"name": "send_email", "args": {"to": "alice"}, "id": "call-email"},
            {"name": "delete_file", "args": {"path": "report.pdf"}, "id": "call-delete"},
        ],
    )
    model = ScriptedModel(messages=iter([turn, AIMessage(content="Done.")]))
    return create_agent(
        model,
        tools=[send_email, delete_file],
        middleware=[HumanInTheLoopMiddleware(interrupt_on=interrupt_on, **middleware)],
        checkpointer=InMemorySaver(),
    )


async def two_open(console: ConsoleClient, cid: str) -> dict[str, str]:
    """The two approvals' tokens by action, once both are posted."""

    def check(feed: dict[str, Any]) -> dict[str, str] | None:
        found = {
            q["payload"]["action"]: q["token"]
            for run in feed.get("runs", [])
            for q in run.get("questions", [])
            if q["status"] == "outstanding" and q.get("token")
        }
        return found if len(found) == 2 else None

    return await console.wait(cid, check, what="two open approvals")


async def both_asked(
    agent: Any, bridge: Bridge, http: aiohttp.ClientSession, url: str, cid: str
) -> tuple[asyncio.Task[Any], ConsoleClient, dict[str, str]]:
    """Ask the agent to email Alice and delete the report, on thread ``cid`` with its questions
    in console conversation ``cid``: the running turn, the console, and both tokens by tool."""
    config: Any = {"configurable": {"thread_id": cid}}
    resumer = Resumer(agent, bridge, route=f"console:{cid}", answerers=["anyone"])
    user = {"messages": [{"role": "user", "content": "Email Alice, then delete the report."}]}
    running = asyncio.create_task(resumer.run(user, config))
    console = ConsoleClient(http, url)
    return running, console, await two_open(console, cid)


def tool_messages(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.name or "": m for m in result["messages"] if isinstance(m, ToolMessage)}


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_two_tool_calls_are_two_questions_and_only_the_approved_one_runs(
    door: Door, http: aiohttp.ClientSession, mode: str
) -> None:
    """One model turn, two gated calls: approve the email, reject the delete; the model is told."""
    ran: list[str] = []
    url = f"http://127.0.0.1:{door.port}"
    async with Bridge(url, API_KEY) as bridge:
        agent = agent_with(
            ran,
            {"send_email": {"allowed_decisions": ["approve", "reject"]}, "delete_file": True},
            interrupt_mode=mode,
        )
        cid = f"hitl-{mode.replace('_', '-')}"
        running, console, tokens = await both_asked(agent, bridge, http, url, cid)
        assert ran == []
        # Answered in the opposite order to the calls: matched by identity, not position.
        await console.answer_ok(tokens["delete_file"], KEEP)
        await console.answer_ok(tokens["send_email"], APPROVE)
        result = await running
        assert ran == ["send_email:alice"]
        told = tool_messages(result)
        assert told["send_email"].content == "sent to alice"
        assert told["delete_file"].status == "error"
        assert "Keep the report." in str(told["delete_file"].content)
        assert result["messages"][-1].content == "Done."
        questions = (await bridge.list()).data
        assert len(questions) == 2
        arguments = {q.payload["action"]: q.payload["arguments"] for q in questions}
        assert arguments == {"send_email": {"to": "alice"}, "delete_file": {"path": "report.pdf"}}


async def test_a_review_that_cannot_be_rejected_is_refused_before_anything_is_asked(
    door: Door,
) -> None:
    """allowed_decisions without reject: UnsupportedReview names the tool; no question is asked."""
    ran: list[str] = []
    async with Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge:
        agent = agent_with(ran, {"delete_file": {"allowed_decisions": ["approve", "edit"]}})
        config: Any = {"configurable": {"thread_id": "hitl-edit"}}
        resumer = Resumer(agent, bridge, route="console:hitl-edit", answerers=["anyone"])
        with pytest.raises(UnsupportedReview, match="delete_file"):
            await resumer.run({"messages": [{"role": "user", "content": "Clean up."}]}, config)
        assert (await bridge.list()).data == []
        assert ran == []  # the turn stays parked: neither call runs
        assert len((await agent.aget_state(config)).interrupts) == 1


async def test_edit_and_respond_reach_the_middleware_where_its_review_allows_them(
    door: Door, http: aiohttp.ClientSession
) -> None:
    """Batched reviews allowing edit and respond: the email runs with the approver's
    arguments (``edited_action``), the delete is answered with their message instead."""
    ran: list[str] = []
    url = f"http://127.0.0.1:{door.port}"
    every = {"allowed_decisions": ["approve", "edit", "reject", "respond"]}
    async with Bridge(url, API_KEY) as bridge:
        agent = agent_with(ran, {"send_email": every, "delete_file": every})
        running, console, tokens = await both_asked(agent, bridge, http, url, "hitl-edits")
        edit = {"decision": "edit", "arguments": {"to": "bob"}}
        await console.answer_ok(tokens["send_email"], edit)
        answer = {"decision": "respond", "message": "Archive it instead."}
        await console.answer_ok(tokens["delete_file"], answer)
        result = await running
        assert ran == ["send_email:bob"]
        told = tool_messages(result)
        # LangChain tells the model the call was replaced, and what ran instead.
        email = str(told["send_email"].content)
        assert email.endswith("sent to bob") and "replaced this tool call" in email
        assert told["delete_file"].content == "Archive it instead."
        questions = (await bridge.list()).data
        assert {q.payload["action"]: q.payload.get("allow") for q in questions} == {
            "send_email": ["approve", "reject", "edit", "respond"],
            "delete_file": ["approve", "reject", "edit", "respond"],
        }
