"""Pydantic AI's deferred approvals become bridge questions; each answer reaches its own call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from adapters.pydantic_ai import pending_calls, results_for, run_with_approvals
from tests.adapters.agent_bridge import DB, SURFACES, WEB, bridge_on, ship_both_rejecting_db


class Script:
    """A FunctionModel script: two approval-needing calls in one turn, then ``summary``."""

    def __init__(self, *, summary: str = "done") -> None:
        self.summary = summary
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        if len(self.seen) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("deploy", WEB, tool_call_id="call_web"),
                    ToolCallPart("deploy", DB, tool_call_id="call_db"),
                ]
            )
        return ModelResponse(parts=[TextPart(self.summary)])

    def returns(self) -> dict[str, ToolReturnPart]:
        """What the model was last told each call returned, by call id."""
        return {
            part.tool_call_id: part
            for message in self.seen[-1]
            for part in getattr(message, "parts", [])
            if isinstance(part, ToolReturnPart)
        }


def deploy_agent(model: Any, ran: list[dict[str, Any]]) -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model, output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append({"service": service, "version": version})
        return f"deployed {service} {version}"

    return agent


@pytest.mark.parametrize("surface", SURFACES)
async def test_two_calls_two_questions_only_the_approved_one_runs(
    tmp_path: Path, surface: str
) -> None:
    """Two calls in one turn: web approved runs; db rejected never runs, and the model hears why."""
    ran: list[dict[str, Any]] = []
    script = Script()
    agent = deploy_agent(FunctionModel(script), ran)
    result, _, saved = await ship_both_rejecting_db(surface, tmp_path, run_with_approvals, agent)
    assert result.output == "done"
    assert ran == [WEB]
    told = script.returns()
    assert told["call_db"].outcome == "denied"
    assert told["call_db"].content == "A person rejected this tool call: not during the freeze"
    assert told["call_web"].content == "deployed web 1.5.0"
    assert len(saved) == 1 and len(script.seen) == 2


EVERY_WAY = ["approve", "reject", "edit", "respond"]


async def test_an_edit_runs_the_tool_with_override_args_and_a_response_denies(
    tmp_path: Path,
) -> None:
    """web approved with changes runs with the edited version (``ToolApproved``'s
    override_args); db answered instead never runs and the model reads the message."""
    ran: list[dict[str, Any]] = []
    script = Script()
    agent = deploy_agent(FunctionModel(script), ran)
    async with bridge_on("console", tmp_path) as desk:
        run = asyncio.create_task(
            run_with_approvals(agent, "ship both", desk.approver(allow=EVERY_WAY), run_id="r-e")
        )
        edited = {**WEB, "version": "1.4.9"}
        await desk.answer_on_console(WEB, {"decision": "edit", "arguments": edited})
        await desk.answer_on_console(DB, {"decision": "respond", "message": "db waits for 18"})
        result = await asyncio.wait_for(run, 30)
    assert result.output == "done"
    assert ran == [edited]
    told = script.returns()
    assert told["call_web"].content == "deployed web 1.4.9"
    assert told["call_db"].outcome == "denied"
    assert told["call_db"].content == (
        "A person answered instead of running this tool call: db waits for 18"
    )


async def test_a_saved_history_asks_again_and_gets_the_same_questions(tmp_path: Path) -> None:
    """A run restarted from its saved history re-asks by run and call id: no new question."""
    ran: list[dict[str, Any]] = []
    script = Script()
    agent = deploy_agent(FunctionModel(script), ran)
    async with bridge_on("console", tmp_path) as desk:
        approver = desk.approver()
        saved: list[str] = []
        # The agent's process is gone; its saved history is not.
        await desk.killed_while_asking(
            run_with_approvals(agent, "ship both", approver, run_id="run-2", save=saved.append)
        )
        before = {q.id for q in await desk.questions("run-2")}
        history = ModelMessagesTypeAdapter.validate_json(saved[0])
        result = await desk.approve_both(
            run_with_approvals(agent, None, approver, run_id="run-2", message_history=history)
        )
        assert {q.id for q in await desk.questions("run-2")} == before and len(before) == 2
    assert result.output == "done"
    assert sorted(ran, key=str) == sorted([WEB, DB], key=str)
    assert len(script.seen) == 2  # the restart made no model call of its own


async def test_test_model_calls_wait_for_consent_and_a_cancel_denies(tmp_path: Path) -> None:
    """TestModel calls the tool; a cancelled question is denied with the reason, the tool idle."""
    ran: list[dict[str, Any]] = []
    agent = deploy_agent(TestModel(), ran)
    async with bridge_on("console", tmp_path) as desk:
        paused = await agent.run("ship")
        assert isinstance(paused.output, DeferredToolRequests)
        [call] = pending_calls(paused.output)
        assert call.tool == "deploy" and set(call.arguments) == {"service", "version"}
        deciding = asyncio.create_task(results_for(paused.output, desk.approver(), run_id="r3"))
        [question] = await desk.approver().ask("r3", [call])
        await desk.bridge.cancel(question.id, "the release was called off")
        results = await asyncio.wait_for(deciding, 30)
        denied = results.approvals[call.call_id]
        finished = await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=results
        )
    assert ran == []
    assert "cancelled: the release was called off" in getattr(denied, "message", "")
    assert finished.output is not None
