"""The Agents SDK adapter against a real bridge process that is SIGKILLed mid-approval."""

from __future__ import annotations

from functools import partial
from typing import Any

import aiohttp
import pytest
from agents import RunState, set_tracing_disabled
from agents.testing import assistant_message, function_call

from adapters.openai_agents import ToolCall, pending_calls, run_with_approvals
from tests.adapters.agent_bridge import WEB
from tests.adapters.openai_agents.test_openai_agents_approvals import deploy_agent
from tests.e2e._agent_restart import approved_across_a_bridge_kill
from tests.e2e._server import StartBot

pytestmark = pytest.mark.e2e
set_tracing_disabled(True)  # no trace export: nothing here may reach the network


async def test_the_run_resumes_once_with_the_answer_across_a_bridge_kill(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Ask, SIGKILL, restart; a re-ask from the saved state is the same question; one tool run."""
    ran: list[dict[str, Any]] = []

    agent, model = deploy_agent(
        ran, [function_call("deploy", WEB, call_id="call_web")], [assistant_message("web is out")]
    )

    async def pending_in(saved: str) -> list[ToolCall]:
        state = await RunState.from_string(agent, saved)
        return pending_calls(state.get_interruptions())

    run = partial(run_with_approvals, agent, "ship web")
    result = await approved_across_a_bridge_kill(
        start_bot, http, run_id="e2e-oai", run=run, pending_in=pending_in
    )
    assert result.final_output == "web is out"
    assert ran == [WEB]
    assert model.remaining_steps == 0
