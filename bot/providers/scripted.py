"""A provider that answers from a script: tests, benchmarks and the demo."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence

from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.kernel.provider import Provider
from bot.providers.base import ProviderError

Script = Callable[[Sequence[Message], Sequence[ToolDefinition]], ModelReply | Awaitable[ModelReply]]


class ScriptedProvider(Provider):
    """Replies in order from a list, or computes each reply with a callable.

    A callable that reads the transcript is stateless, so it survives a
    restart between a pause and its resume; a list does not.
    """

    def __init__(self, script: Iterable[ModelReply] | Script) -> None:
        self._script: Script | None = script if callable(script) else None
        self._replies = [] if callable(script) else list(script)
        self.calls: list[tuple[Message, ...]] = []

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> ModelReply:
        self.calls.append(tuple(messages))
        if self._script is not None:
            reply = self._script(messages, tools)
            return await reply if inspect.isawaitable(reply) else reply
        if not self._replies:
            raise ProviderError("the scripted provider has no reply left; add one per model round.")
        return self._replies.pop(0)
