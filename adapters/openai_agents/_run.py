"""The Agents SDK's interruptions answered through the bridge, matched by call id."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents import Agent, Runner, RunResult, RunState, ToolApprovalItem, TResponseInputItem

from adapters._tool_approval import (
    Approve,
    Approver,
    Reject,
    ToolCall,
    ToolCallDecision,
    arguments_of,
)

# Called with the serialized RunState before the run waits on a person; may be async.
SaveState = Callable[[str], object]


def pending_calls(interruptions: Sequence[ToolApprovalItem]) -> list[ToolCall]:
    """Each interruption as the call a person is asked about."""
    calls = []
    for item in interruptions:
        call_id = item.call_id
        if not call_id:
            raise ValueError(
                f"The interruption for {item.name!r} carries no call id, so its answer "
                "could not be matched to it; approve it on the RunState yourself."
            )
        tool = item.qualified_name or item.name or "tool"
        calls.append(ToolCall(call_id, tool, arguments_of(item.arguments)))
    return calls


def approved_with_changes(arguments: Mapping[str, Any]) -> str:
    """What the model reads for an edit: this call did not run; the approved one is this."""
    shown = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True)
    return (
        "A person approved this tool call only with changes, so it did not run. "
        f"To go ahead, call the tool again with exactly these arguments: {shown}"
    )


async def resolve(
    state: RunState[Any], approver: Approver, *, run_id: str
) -> dict[str, ToolCallDecision]:
    """Ask about every interruption on ``state``, wait, and approve or reject each on it.

    Each decision goes to the interruption with the same call id, never by
    position. Asking again for the same run and call (say, after the agent's
    process restarted from a saved state) returns the question already asked.

    ``RunState.approve`` runs a call with the arguments the model gave, and has no
    way to run it with others. So an approval with changes (``edit``) is a
    rejection here, whose message gives the model the approver's arguments to call
    again with (the new call is asked about in turn); the original never runs.
    """
    interruptions = state.get_interruptions()
    decisions = await approver.decide(run_id, pending_calls(interruptions))
    items = {item.call_id: item for item in interruptions}
    for call_id, decision in decisions.items():
        item = items[call_id]
        if isinstance(decision, Approve) and decision.arguments is not None:
            state.reject(item, rejection_message=approved_with_changes(decision.arguments))
        elif isinstance(decision, Approve):
            state.approve(item)
        elif isinstance(decision, Reject):
            state.reject(item, rejection_message=decision.message)
    return decisions


async def run_with_approvals(
    agent: Agent[Any],
    input: str | list[TResponseInputItem] | RunState[Any],
    approver: Approver,
    *,
    run_id: str,
    save: SaveState | None = None,
    **runner_options: Any,
) -> RunResult:
    """``Runner.run`` until no tool call waits for consent; each pause asks the bridge.

    ``input`` may be a saved ``RunState`` (``RunState.from_string``): its
    pending interruptions are asked about first, which returns the questions
    asked before the restart. ``save`` receives ``state.to_string()`` before
    each wait, so the caller can keep it (the bridge keeps only the questions).
    ``runner_options`` go to every ``Runner.run`` call.
    """
    if isinstance(input, RunState) and input.get_interruptions():
        await _pause(input, approver, run_id=run_id, save=save)
    result = await Runner.run(agent, input, **runner_options)
    while result.interruptions:
        state = result.to_state()
        await _pause(state, approver, run_id=run_id, save=save)
        result = await Runner.run(agent, state, **runner_options)
    return result


async def _pause(
    state: RunState[Any], approver: Approver, *, run_id: str, save: SaveState | None
) -> None:
    if save is not None:
        saved = save(state.to_string())
        if inspect.isawaitable(saved):
            await saved
    await resolve(state, approver, run_id=run_id)
