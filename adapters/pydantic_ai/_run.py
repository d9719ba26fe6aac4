"""Pydantic AI's deferred approvals answered through the bridge, keyed by tool call id."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import (
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.agent import AbstractAgent, AgentRunResult

from adapters._tool_approval import Approve, Approver, Reject, ToolCall, arguments_of

# Called with the message history as JSON before the run waits on a person; may be async.
SaveHistory = Callable[[str], object]


def pending_calls(requests: DeferredToolRequests) -> list[ToolCall]:
    """Each call waiting for approval as the call a person is asked about."""
    return [
        ToolCall(part.tool_call_id, part.tool_name, arguments_of(part.args))
        for part in requests.approvals
    ]


async def results_for(
    requests: DeferredToolRequests, approver: Approver, *, run_id: str
) -> DeferredToolResults:
    """Ask about every approval in ``requests``, wait, and answer each by its tool call id.

    An approval is ``True``, or ``ToolApproved(override_args=...)`` when the person
    approved with changes; a rejection, a response in the tool's place, or a
    question that closed without a decision, is ``ToolDenied`` with the sentence
    the model reads instead of the tool's result. Asking again for the same run and call returns the
    question already asked.
    """
    decisions = await approver.decide(run_id, pending_calls(requests))
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    answered_by: dict[str, str] = {}
    for call_id, decision in decisions.items():
        if isinstance(decision, Approve) and decision.arguments is not None:
            approvals[call_id] = ToolApproved(override_args=dict(decision.arguments))
        elif isinstance(decision, Approve):
            approvals[call_id] = True
        elif isinstance(decision, Reject):
            approvals[call_id] = ToolDenied(decision.message)
        if decision.answered_by:
            answered_by[call_id] = decision.answered_by
    return requests.build_results(approvals=approvals, answered_by=answered_by)


async def run_with_approvals(
    agent: AbstractAgent[Any, Any],
    user_prompt: str | None,
    approver: Approver,
    *,
    run_id: str,
    message_history: Sequence[ModelMessage] | None = None,
    save: SaveHistory | None = None,
    **run_options: Any,
) -> AgentRunResult[Any]:
    """``agent.run`` until its output is no longer a request for approval.

    The agent's ``output_type`` must include ``DeferredToolRequests``. Each
    pause asks the bridge, then a new run continues from the message history
    with the ``DeferredToolResults``. ``save`` receives that history as JSON
    before each wait; after a restart, pass it back (parsed with
    ``ModelMessagesTypeAdapter``) as ``message_history`` with no prompt: the
    pending calls come back without a model call, and asking again returns the
    questions asked before. A pause that also holds external calls
    (``requests.calls``) is returned as it is, for the caller to finish.
    """
    result = await agent.run(user_prompt, message_history=message_history, **run_options)
    while isinstance(result.output, DeferredToolRequests) and not result.output.calls:
        history = result.all_messages()
        if save is not None:
            saved = save(ModelMessagesTypeAdapter.dump_json(history).decode())
            if inspect.isawaitable(saved):
                await saved
        results = await results_for(result.output, approver, run_id=run_id)
        result = await agent.run(
            message_history=history, deferred_tool_results=results, **run_options
        )
    return result
