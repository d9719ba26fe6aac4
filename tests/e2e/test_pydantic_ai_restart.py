"""The Pydantic AI adapter against a real bridge process that is SIGKILLed mid-approval."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from adapters.pydantic_ai import Approver, pending_calls, run_with_approvals
from bot.client import Bridge
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot

pytestmark = pytest.mark.e2e

WEB = {"service": "web", "version": "1.5.0"}


async def test_the_run_resumes_once_with_the_answer_across_a_bridge_kill(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Ask, SIGKILL, restart; a re-ask from the saved history is the same question; one tool run."""
    server = await start_bot(**api_env("console:*"), **OPERATOR)
    ran: list[dict[str, Any]] = []
    model_calls: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        model_calls.append(len(messages))
        if len(model_calls) == 1:
            return ModelResponse(parts=[ToolCallPart("deploy", WEB, tool_call_id="call_web")])
        return ModelResponse(parts=[TextPart("web is out")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(respond), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append({"service": service, "version": version})
        return f"deployed {service} {version}"

    console = ConsoleClient(http, server.url)
    saved: list[str] = []
    async with Bridge(server.url, API_KEY) as bridge:
        approver = Approver(bridge=bridge, route="console:agents", answerers=["anyone"])
        run = asyncio.create_task(
            run_with_approvals(agent, "ship web", approver, run_id="e2e-pai", save=saved.append)
        )
        asked = await console.outstanding("agents", "approval")
        server.kill()
        await server.restart()
        # What a restarted agent would do from its saved history: the same question comes back.
        history = ModelMessagesTypeAdapter.validate_json(saved[0])
        paused = await agent.run(message_history=history)
        assert isinstance(paused.output, DeferredToolRequests)
        [again] = await approver.ask("e2e-pai", pending_calls(paused.output))
        still = await console.outstanding("agents", "approval")
        assert still["interrupt_id"] == asked["interrupt_id"]
        await console.answer_ok(still["token"], APPROVE)
        result = await asyncio.wait_for(run, 60)
        page = await bridge.list(run_ref="e2e-pai")
    assert result.output == "web is out"
    assert ran == [WEB]
    assert len(model_calls) == 2  # the re-ask from history called no model
    assert [q.id for q in page.data] == [again.id]
    assert page.data[0].status == "answered"
