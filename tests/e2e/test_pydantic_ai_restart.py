"""The Pydantic AI adapter against a real bridge process that is SIGKILLed mid-approval."""

from __future__ import annotations

from functools import partial
from typing import Any

import aiohttp
import pytest
from pydantic_ai import (
    DeferredToolRequests,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from adapters.pydantic_ai import ToolCall, pending_calls, run_with_approvals
from tests.adapters.agent_bridge import WEB
from tests.adapters.pydantic_ai.test_pydantic_ai_approvals import deploy_agent
from tests.e2e._agent_restart import approved_across_a_bridge_kill
from tests.e2e._server import StartBot

pytestmark = pytest.mark.e2e


async def test_the_run_resumes_once_with_the_answer_across_a_bridge_kill(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Ask, SIGKILL, restart; a re-ask from the saved history is the same question; one tool run."""
    ran: list[dict[str, Any]] = []
    model_calls: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        model_calls.append(len(messages))
        if len(model_calls) == 1:
            return ModelResponse(parts=[ToolCallPart("deploy", WEB, tool_call_id="call_web")])
        return ModelResponse(parts=[TextPart("web is out")])

    agent = deploy_agent(FunctionModel(respond), ran)

    async def pending_in(saved: str) -> list[ToolCall]:
        history = ModelMessagesTypeAdapter.validate_json(saved)
        paused = await agent.run(message_history=history)
        assert isinstance(paused.output, DeferredToolRequests)
        return pending_calls(paused.output)

    run = partial(run_with_approvals, agent, "ship web")
    result = await approved_across_a_bridge_kill(
        start_bot, http, run_id="e2e-pai", run=run, pending_in=pending_in
    )
    assert result.output == "web is out"
    assert ran == [WEB]
    assert len(model_calls) == 2  # the re-ask from history called no model
