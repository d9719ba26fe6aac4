"""The OpenAI Agents SDK asks a person through the bridge (extra ``openai-agents``).

A tool with ``needs_approval`` stops the run with ``ToolApprovalItem``
interruptions; each becomes an approval question on the bridge, and each
answer approves or rejects the interruption with the same call id on the
``RunState`` before ``Runner.run(agent, state)`` continues. The boundary:
this package is a client of ``/v1`` through ``bot.client`` and holds no rule
of its own; the server never imports it. The serialized ``RunState`` stays
with the caller (see docs/agents/openai-agents.md).
"""

from adapters._extras import needs_extra
from adapters._renamed import old_names

with needs_extra("adapters.openai_agents", "openai-agents", "agents", "openai"):
    from adapters._tool_approval import Approve, Approver, Reject, ToolCall, ToolCallDecision
    from adapters.openai_agents._run import SaveState, pending_calls, resolve, run_with_approvals

__all__ = [
    "Approve",
    "Approver",
    "Reject",
    "SaveState",
    "ToolCall",
    "ToolCallDecision",
    "pending_calls",
    "resolve",
    "run_with_approvals",
]

# ``Decision`` is also the contract's name for what an approver may decide.
__getattr__ = old_names(__name__, {"Decision": "ToolCallDecision"})
