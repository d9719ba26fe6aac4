"""A pause: an exception inside a turn, a value at the service boundary."""

from __future__ import annotations

from collections.abc import Mapping
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
    # Who may answer when the asker named them (an API question); empty: the rule.
    answerers: tuple[str, ...] = ()
    # Under a quorum (``quorum`` above 1), the votes so far, as the question stores
    # them; a surface shows them with ``bot.questions.quorum.tally_text``.
    # ``level``: the escalation steps taken.
    tally: Mapping[str, Any] | None = None
    quorum: int = 1
    level: int = 0
    # The question's policy as stored (``bot.questions.quorum.policy_of`` reads it), so
    # a surface draws who may answer as the redeem decides it.
    policy: Mapping[str, Any] | None = None


class InvocationPaused(BotError):
    """Raised by a stage to stop the turn at a pending interrupt."""

    def __init__(self, interrupt: PendingInterrupt) -> None:
        super().__init__(f"paused on {interrupt.name!r} ({interrupt.interrupt_id})")
        self.interrupt = interrupt
