"""A cap on open event streams, per client and in total.

Each stream holds a connection and a task for as long as a page is open,
so without a cap one client (or a reload loop) can hold them all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from adapters.console._wording import TOO_MANY_STREAMS, TOO_MANY_STREAMS_HERE


@dataclass(frozen=True, slots=True)
class ConsoleLimits:
    """The console's request limits, from settings."""

    max_json_depth: int = 32
    max_streams: int = 200
    max_streams_per_client: int = 8
    # Answers one client address may post a minute (a sliding minute, in this process).
    answers_per_minute: int = 60


class StreamGate:
    """Counts open streams by client address; ``enter`` refuses past either cap."""

    def __init__(self, limits: ConsoleLimits) -> None:
        self._limits = limits
        self._open: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self._open.values())

    def enter(self, client: str) -> str | None:
        """None when admitted (call ``leave`` later); otherwise the refusal sentence."""
        if self.total >= self._limits.max_streams:
            return TOO_MANY_STREAMS
        if self._open[client] >= self._limits.max_streams_per_client:
            return TOO_MANY_STREAMS_HERE
        self._open[client] += 1
        return None

    def leave(self, client: str) -> None:
        self._open[client] -= 1
        if self._open[client] <= 0:
            del self._open[client]
