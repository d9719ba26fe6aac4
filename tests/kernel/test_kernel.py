"""The kernel: the fold's refusals, the round guard, dispatch and checkpoint versions."""

from __future__ import annotations

from typing import Any

import pytest

from bot.kernel import (
    Agent,
    CapabilityContribution,
    CapabilityRequest,
    CheckpointVersionError,
    ContributionError,
    EffectFamily,
    Phase,
    StageDescriptor,
    TurnCompleted,
    TurnLimitError,
    TurnRequest,
    TurnState,
    fold_contributions,
    function_tool,
    no_change,
    restore,
    snapshot,
)
from bot.kernel.messages import Message, ToolCall
from bot.providers.scripted import ScriptedProvider
from bot.testing import call, calls, say

REQUEST = TurnRequest(text="hi", scope="T1", run_id="run_1")


async def _nothing(context: Any) -> Any:
    return no_change("idle")


def stage(stage_id: str, family: EffectFamily | None = None) -> StageDescriptor:
    return StageDescriptor(stage_id, Phase.POST_TOOL, "cap", family)


def test_fold_refuses_an_effect_family_the_plan_did_not_grant() -> None:
    """A stage needing NETWORK folds only when the request grants NETWORK."""
    contribution = CapabilityContribution(
        "cap", stages=(stage("s", EffectFamily.NETWORK),), handlers={"s": _nothing}
    )
    with pytest.raises(ContributionError, match="network"):
        fold_contributions([contribution], [CapabilityRequest("cap")])
    granted = fold_contributions(
        [contribution], [CapabilityRequest("cap", frozenset({EffectFamily.NETWORK}))]
    )
    assert [s.stage_id for s in granted.stages] == ["s"]


def test_fold_refuses_duplicate_stage_ids_and_tool_names() -> None:
    """Two stages or two tools with one name are a configuration error."""
    one = CapabilityContribution("a", stages=(stage("s"),), handlers={"s": _nothing})
    two = CapabilityContribution("b", stages=(stage("s"),), handlers={"s": _nothing})
    with pytest.raises(ContributionError, match="contributed twice"):
        fold_contributions([one, two], [])

    class Spec:
        name, description, parameters = "t", "t", ()

        async def coroutine(self) -> str:
            return ""

    tools = CapabilityContribution("a", tools=(Spec(),))  # type: ignore[arg-type]
    with pytest.raises(ContributionError, match="tool 't'"):
        fold_contributions([tools, tools], [])


async def test_the_round_guard_stops_a_model_that_never_answers() -> None:
    """A model calling tools forever hits max_rounds with a clear error."""

    async def echo() -> str:
        return "again"

    looping = ScriptedProvider(lambda messages, tools: calls(call("echo")))
    agent = Agent(
        looping,
        tools=[function_tool(echo, name="echo", description="e", parameters={})],
        max_rounds=3,
    )
    with pytest.raises(TurnLimitError, match="3 rounds"):
        await agent.run_turn(REQUEST)
    assert len(looping.calls) == 3


async def test_unknown_tools_and_failing_tools_become_observations() -> None:
    """The model hears about a missing or failing tool instead of the turn crashing."""

    async def explode() -> str:
        raise ValueError("no disk")

    agent = Agent(
        ScriptedProvider([calls(call("missing"), call("explode")), say("ok")]),
        tools=[function_tool(explode, name="explode", description="x", parameters={})],
    )
    outcome = await agent.run_turn(REQUEST)
    assert isinstance(outcome, TurnCompleted)
    observed = [m.content for m in outcome.state.messages if m.role == "tool"]
    assert "no tool named 'missing'" in observed[0]
    assert "ValueError: no disk" in observed[1]


async def test_call_ids_are_reserved_by_the_kernel_and_unique() -> None:
    """Each call in a round gets its own kernel-minted id, joined by its tool message."""

    async def noop() -> str:
        return "done"

    agent = Agent(
        ScriptedProvider([calls(call("noop"), call("noop")), say("ok")]),
        tools=[function_tool(noop, name="noop", description="n", parameters={})],
    )
    outcome = await agent.run_turn(REQUEST)
    assistant = next(m for m in outcome.state.messages if m.tool_calls)
    ids = [c.call_id for c in assistant.tool_calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
    assert [m.tool_call_id for m in outcome.state.messages if m.role == "tool"] == ids


def test_checkpoints_round_trip_and_unknown_versions_are_refused() -> None:
    """A snapshot restores to equal state; another version is refused at once."""
    state = TurnState(
        messages=[Message("user", "hi")],
        round=2,
        reserved=[ToolCall("call_1", "ask_user", {"questions": []})],
        observations={"call_0": "x"},
    )
    data = snapshot(REQUEST, state)
    request, restored = restore(data)
    assert request == REQUEST
    assert restored == state
    with pytest.raises(CheckpointVersionError, match="version 99"):
        restore({**data, "version": 99})


async def test_resume_refuses_an_answer_for_a_call_the_round_did_not_reserve() -> None:
    """Joining on a foreign call id is a contract violation, not a silent drop."""
    from bot.kernel import ContractViolationError

    agent = Agent(ScriptedProvider([say("never")]))
    state = TurnState(reserved=[ToolCall("call_1", "ask_user", {})])
    with pytest.raises(ContractViolationError, match="call_2"):
        await agent.resume(REQUEST, state, observations={"call_2": "hi"})


async def test_a_crashed_stage_stops_its_phase_and_ends_the_turn() -> None:
    """After a FAILED pre-tool stage no later stage of the phase runs and no tool is dispatched."""
    from bot.kernel import ContractViolationError

    ran: list[str] = []

    async def crash(context: Any) -> Any:
        ran.append("crash")
        raise RuntimeError("wired wrong")

    async def later(context: Any) -> Any:
        ran.append("later")
        return no_change("looked")

    async def tool() -> str:
        ran.append("tool")
        return "ran"

    first = StageDescriptor("a.crash", Phase.PRE_TOOL, "a")
    second = StageDescriptor("b.later", Phase.PRE_TOOL, "b")

    class Contributes:
        def __init__(self, name: str, stage: StageDescriptor, handler: Any) -> None:
            self.name, self._stage, self._handler = name, stage, handler

        def contribute(self, request: CapabilityRequest) -> CapabilityContribution:
            return CapabilityContribution(
                self.name, stages=(self._stage,), handlers={self._stage.stage_id: self._handler}
            )

    agent = Agent(
        ScriptedProvider([calls(call("tool")), say("never")]),
        capabilities=[Contributes("a", first, crash), Contributes("b", second, later)],
        tools=[function_tool(tool, name="tool", description="t", parameters={})],
    )
    with pytest.raises(ContractViolationError, match=r"'a\.crash' crashed in pre-tool"):
        await agent.run_turn(REQUEST)
    assert ran == ["crash"]


class RecordingJournal:
    """Answers with the steps it holds and counts every read."""

    def __init__(self, steps: dict[str, Any]) -> None:
        self.held = steps
        self.reads = 0

    async def steps(self, run_id: str) -> dict[str, Any]:
        self.reads += 1
        return dict(self.held)

    async def record(self, run_id: str, step: str, value: Any) -> None:
        self.held.setdefault(step, value)


async def test_a_fresh_turn_reads_no_journal_and_a_redrive_replays_it() -> None:
    """A run never driven has nothing to replay; a re-drive reuses the recorded reply."""
    journal = RecordingJournal({})
    provider = ScriptedProvider([say("first"), say("second")])
    agent = Agent(provider, journal=journal)
    request = TurnRequest(text="go", scope="s", run_id="r1")
    first = await agent.run_turn(request, fresh=True)
    assert journal.reads == 0
    # The final reply comes back for the caller to journal with the ending, in one write.
    assert isinstance(first, TurnCompleted) and list(first.unjournaled) == ["model:1"]
    for step, value in first.unjournaled.items():
        await journal.record("r1", step, value)
    again = await agent.run_turn(request)  # recovery drives it again
    assert journal.reads == 1
    assert isinstance(first, TurnCompleted) and isinstance(again, TurnCompleted)
    assert again.text == first.text == "first"  # replayed from the journal, not asked again
    assert len(provider.calls) == 1
