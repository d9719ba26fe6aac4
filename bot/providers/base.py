"""The one port every model provider implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.errors import BotError
from bot.kernel.messages import Message, ModelReply, ToolDefinition


class Provider(Protocol):
    """A chat model; the turn loop relies on it for each round."""

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> ModelReply: ...


class ProviderError(BotError):
    """The model could not be asked; the message says whether to retry."""
