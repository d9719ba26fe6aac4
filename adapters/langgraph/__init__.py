"""LangGraph nodes ask a person through the bridge, and parked threads resume on the answer.

The boundary: a thin client of ``/v1`` through ``bot.client`` (its keys,
retries and errors), with LangGraph's own ``interrupt()``, checkpointer and
``Command(resume=...)`` for the pause. The server never imports this package.
See docs/agents/langgraph.md.
"""

from adapters._extras import needs_extra
from adapters._renamed import old_names

with needs_extra("adapters.langgraph", "langgraph", "langgraph", "langchain_core"):
    from adapters.langgraph._ask import BRIDGE_INTERRUPT, ask_human, request_approval
    from adapters.langgraph._outcomes import (
        ApprovalResult,
        AskHumanResult,
        HumanAnswered,
        HumanApproved,
        HumanRejected,
        Unanswered,
    )
    from adapters.langgraph._resume import ResumableGraph, Resumer, Resumption
    from adapters.langgraph.errors import (
        ForeignInterrupt,
        LangGraphError,
        NotInNode,
        QuestionChanged,
        UnsupportedReview,
    )

__all__ = [
    "BRIDGE_INTERRUPT",
    "ApprovalResult",
    "AskHumanResult",
    "ForeignInterrupt",
    "HumanAnswered",
    "HumanApproved",
    "HumanRejected",
    "LangGraphError",
    "NotInNode",
    "QuestionChanged",
    "ResumableGraph",
    "Resumer",
    "Resumption",
    "Unanswered",
    "UnsupportedReview",
    "ask_human",
    "request_approval",
]

# The names before they meant one thing across the project (``Rejected`` and
# ``Answered`` name other types in bot.client and bot.stores).
__getattr__ = old_names(
    __name__,
    {
        "Answered": "HumanAnswered",
        "Approved": "HumanApproved",
        "Rejected": "HumanRejected",
        "Decision": "ApprovalResult",
        "Reply": "AskHumanResult",
    },
)
