"""The Agents SDK adapter against a real bridge process that is SIGKILLed mid-approval."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from agents import Agent, RunState, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from adapters.openai_agents import Approver, pending_calls, run_with_approvals
from bot.client import Bridge
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot

pytestmark = pytest.mark.e2e
set_tracing_disabled(True)  # no trace export: nothing here may reach the network

WEB = {"service": "web", "version": "1.5.0"}


async def test_the_run_resumes_once_with_the_answer_across_a_bridge_kill(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Ask, SIGKILL, restart; a re-ask from the saved state is the same question; one tool run."""
    server = await start_bot(**api_env("console:*"), **OPERATOR)
    ran: list[dict[str, Any]] = []

    @function_tool(needs_approval=True)
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append({"service": service, "version": version})
        return f"deployed {service} {version}"

    model = ScriptedModel(
        [[function_call("deploy", WEB, call_id="call_web")], [assistant_message("web is out")]]
    )
    agent = Agent(name="ops", model=model, tools=[deploy])
    console = ConsoleClient(http, server.url)
    saved: list[str] = []
    async with Bridge(server.url, API_KEY) as bridge:
        approver = Approver(bridge=bridge, route="console:agents", answerers=["anyone"])
        run = asyncio.create_task(
            run_with_approvals(agent, "ship web", approver, run_id="e2e-oai", save=saved.append)
        )
        asked = await console.outstanding("agents", "approval")
        server.kill()
        await server.restart()
        # What a restarted agent would do from its saved state: the same question comes back.
        state = await RunState.from_string(agent, saved[0])
        [again] = await approver.ask("e2e-oai", pending_calls(state.get_interruptions()))
        still = await console.outstanding("agents", "approval")
        assert still["interrupt_id"] == asked["interrupt_id"]
        await console.answer_ok(still["token"], APPROVE)
        result = await asyncio.wait_for(run, 60)
        page = await bridge.list(run_ref="e2e-oai")
    assert result.final_output == "web is out"
    assert ran == [WEB]
    assert model.remaining_steps == 0
    assert [q.id for q in page.data] == [again.id]
    assert page.data[0].status == "answered"
