"""The LangGraph adapter's errors, under the client's ``BridgeError`` so one ``except`` holds."""

from __future__ import annotations

from bot.client.errors import BridgeError


class LangGraphError(BridgeError):
    """Base of the adapter's errors: a graph the bridge cannot ask for or resume."""


class NotInNode(LangGraphError):
    """``ask_human`` or ``request_approval`` was called outside a running graph node."""


class QuestionChanged(LangGraphError):
    """A node re-ran and asked something other than what it asked before it paused."""


class ForeignInterrupt(LangGraphError):
    """Every pending interrupt is someone else's: the resumer has nothing it may answer."""


class UnsupportedReview(LangGraphError):
    """A ``HumanInTheLoopMiddleware`` review the bridge cannot answer (it lacks approve/reject)."""
