"""The model port the turn loop calls once per round.

Defined here, beside the loop that relies on it, so that providers import
the kernel and never the reverse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.kernel.messages import Message, ModelReply, ToolDefinition


class Provider(Protocol):
    """A chat model; the turn loop relies on it for each round."""

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> ModelReply: ...
