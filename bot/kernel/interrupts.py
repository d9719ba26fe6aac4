"""A pause: an exception inside a turn, a value at the service boundary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.errors import BotError


@dataclass(frozen=True, slots=True)
class PendingInterrupt:
    """A question waiting for a person, with the token that answers it.

    ``resumable`` is measured by the capability: True only when the turn
    state reached the checkpoint store and the write said so.
    """

    name: str
    kind: str
    payload: dict[str, Any]
    token: str
    tool_call_id: str
    interrupt_id: str
    run_id: str
    session_id: str
    expires_at: float
    resumable: bool


class InvocationPaused(BotError):
    """Raised by a stage to stop the turn at a pending interrupt."""

    def __init__(self, interrupt: PendingInterrupt) -> None:
        super().__init__(f"paused on {interrupt.name!r} ({interrupt.interrupt_id})")
        self.interrupt = interrupt
