"""The Agents SDK's interruptions become bridge questions; each answer reaches its own call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, RunState, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from adapters.openai_agents import Approve, Reject, pending_calls, resolve, run_with_approvals
from bot.client import WaitTimeout
from tests import waiting
from tests.adapters.agent_bridge import DB, SURFACES, WEB, bridge_on, ship_both_rejecting_db


def deploy_agent(ran: list[dict[str, Any]], *steps: Any) -> tuple[Agent[Any], ScriptedModel]:
    """An agent whose one tool needs approval and records each call that actually runs."""

    @function_tool(needs_approval=True)
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append({"service": service, "version": version})
        return f"deployed {service} {version}"

    model = ScriptedModel(steps)
    return Agent(name="ops", model=model, tools=[deploy]), model


def two_deploys() -> list[Any]:
    return [
        function_call("deploy", WEB, call_id="call_web"),
        function_call("deploy", DB, call_id="call_db"),
    ]


def outputs(model: ScriptedModel) -> dict[str, str]:
    """What the model was last told each call returned, by call id."""
    assert model.last_call is not None
    return {
        item["call_id"]: item["output"]
        for item in model.last_call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }


@pytest.mark.parametrize("surface", SURFACES)
async def test_two_calls_two_questions_only_the_approved_one_runs(
    tmp_path: Path, surface: str
) -> None:
    """Two calls in one turn: web approved runs; db rejected never runs, and the model hears why."""
    ran: list[dict[str, Any]] = []
    agent, model = deploy_agent(ran, two_deploys(), [assistant_message("web is out")])
    result, asked, saved = await ship_both_rejecting_db(
        surface, tmp_path, run_with_approvals, agent
    )
    assert result.final_output == "web is out"
    assert ran == [WEB]
    told = outputs(model)
    assert told["call_db"] == "A person rejected this tool call: not during the freeze"
    assert told["call_web"] == "deployed web 1.5.0"
    assert {q.answer["decision"] for q in asked if q.answer} == {"approve", "reject"}
    assert len(saved) == 1 and model.remaining_steps == 0


async def test_a_restored_state_asks_again_and_gets_the_same_questions(tmp_path: Path) -> None:
    """Resolving a state restored from its string re-asks by run and call id: no new question."""
    ran: list[dict[str, Any]] = []
    agent, _ = deploy_agent(ran, two_deploys(), [assistant_message("done")])
    async with bridge_on("console", tmp_path) as desk:
        approver = desk.approver()
        saved: list[str] = []
        # The agent's process is gone; its state string is not.
        await desk.killed_while_asking(
            run_with_approvals(agent, "ship both", approver, run_id="run-2", save=saved.append)
        )
        state = await RunState.from_string(agent, saved[0])
        before = {q.id for q in await desk.questions("run-2")}
        again = await approver.ask("run-2", pending_calls(state.get_interruptions()))
        assert {q.id for q in again} == before and len(before) == 2
        result = await desk.approve_both(run_with_approvals(agent, state, approver, run_id="run-2"))
        assert {q.id for q in await desk.questions("run-2")} == before
    assert result.final_output == "done"
    assert sorted(ran, key=str) == sorted([WEB, DB], key=str)


async def test_a_cancelled_question_is_a_rejection_saying_so(tmp_path: Path) -> None:
    """No decision is no consent: a cancelled question keeps the tool idle and tells the model."""
    ran: list[dict[str, Any]] = []
    agent, model = deploy_agent(
        ran, [function_call("deploy", WEB, call_id="call_web")], [assistant_message("stopped")]
    )
    async with bridge_on("console", tmp_path) as desk:
        run = asyncio.create_task(
            run_with_approvals(agent, "ship web", desk.approver(), run_id="run-3")
        )
        question = await _first_question(desk, "run-3")
        await desk.bridge.cancel(question, "the release was called off")
        result = await asyncio.wait_for(run, 30)
    assert result.final_output == "stopped" and ran == []
    told = outputs(model)["call_web"]
    assert "cancelled: the release was called off" in told and "did not run" in told


async def test_resolve_applies_each_decision_to_its_own_call(tmp_path: Path) -> None:
    """resolve() returns decisions by call id and leaves the state approved and rejected so."""
    ran: list[dict[str, Any]] = []
    agent, _ = deploy_agent(ran, list(reversed(two_deploys())), [assistant_message("ok")])
    async with bridge_on("console", tmp_path) as desk:
        paused = await Runner.run(agent, "ship both")
        state = paused.to_state()
        deciding = asyncio.create_task(resolve(state, desk.approver(), run_id="run-4"))
        await desk.decide(WEB, approve=False)
        await desk.decide(DB, approve=True)
        decisions = await asyncio.wait_for(deciding, 30)
        await Runner.run(agent, state)
    assert isinstance(decisions["call_db"], Approve)
    assert isinstance(decisions["call_web"], Reject)
    assert decisions["call_web"].message == "A person rejected this tool call."
    assert ran == [DB]


async def _first_question(desk: Any, run_ref: str) -> str:
    async def listed() -> str | None:
        found = await desk.questions(run_ref)
        return str(found[0].id) if found else None

    return await waiting.eventually(listed, what=f"a question of {run_ref}")


async def test_a_wait_that_times_out_runs_nothing_and_a_later_run_picks_it_up(
    tmp_path: Path,
) -> None:
    """WaitTimeout leaves the question open and the tool idle; the saved state resumes it."""
    ran: list[dict[str, Any]] = []
    agent, _ = deploy_agent(
        ran, [function_call("deploy", WEB, call_id="call_web")], [assistant_message("out")]
    )
    async with bridge_on("console", tmp_path) as desk:
        saved: list[str] = []
        with pytest.raises(WaitTimeout):
            await run_with_approvals(
                agent, "ship web", desk.approver(timeout=0.5), run_id="run-5", save=saved.append
            )
        [still_open] = await desk.questions("run-5")
        assert still_open.status == "open" and ran == []
        state = await RunState.from_string(agent, saved[0])
        later = asyncio.create_task(
            run_with_approvals(agent, state, desk.approver(), run_id="run-5")
        )
        await desk.decide(WEB, approve=True)
        result = await asyncio.wait_for(later, 30)
        assert [q.id for q in await desk.questions("run-5")] == [still_open.id]
    assert result.final_output == "out" and ran == [WEB]


async def test_an_edit_is_a_rejection_carrying_the_approved_arguments(tmp_path: Path) -> None:
    """RunState.approve has no edit: the edited call does not run; the model is told the
    approver's arguments, and its new call with them is asked about and runs once approved."""
    ran: list[dict[str, Any]] = []
    edited = {**WEB, "version": "1.4.9"}
    steps = (
        [function_call("deploy", WEB, call_id="call_web")],
        [function_call("deploy", edited, call_id="call_again")],
        [assistant_message("shipped 1.4.9")],
    )
    agent, model = deploy_agent(ran, *steps)
    every = ["approve", "reject", "edit", "respond"]
    async with bridge_on("console", tmp_path) as desk:
        run = asyncio.create_task(
            run_with_approvals(agent, "ship web", desk.approver(allow=every), run_id="run-e")
        )
        await desk.answer_on_console(WEB, {"decision": "edit", "arguments": edited})
        await desk.decide(edited, approve=True)
        result = await asyncio.wait_for(run, 30)
    assert result.final_output == "shipped 1.4.9"
    assert ran == [edited]
    told = outputs(model)
    assert told["call_web"].startswith("A person approved this tool call only with changes")
    assert '"version": "1.4.9"' in told["call_web"]
