"""Pydantic AI asks a person through the bridge (extra ``pydantic-ai``).

A tool with ``requires_approval=True`` ends the run with
``DeferredToolRequests``; each of its ``approvals`` becomes an approval
question on the bridge, and the answers become ``DeferredToolResults``
(``True``, or ``ToolDenied`` with the reason) keyed by tool call id, with
which the run continues from its message history. The boundary: this package
is a client of ``/v1`` through ``bot.client`` and holds no rule of its own;
the server never imports it. The message history stays with the caller (see
docs/agents/pydantic-ai.md).
"""

from adapters._extras import needs_extra
from adapters._renamed import old_names

with needs_extra("adapters.pydantic_ai", "pydantic-ai", "pydantic_ai"):
    from adapters._tool_approval import Approve, Approver, Reject, ToolCall, ToolCallDecision
    from adapters.pydantic_ai._run import (
        SaveHistory,
        pending_calls,
        results_for,
        run_with_approvals,
    )

__all__ = [
    "Approve",
    "Approver",
    "Reject",
    "SaveHistory",
    "ToolCall",
    "ToolCallDecision",
    "pending_calls",
    "results_for",
    "run_with_approvals",
]

# ``Decision`` is also the contract's name for what an approver may decide.
__getattr__ = old_names(__name__, {"Decision": "ToolCallDecision"})
