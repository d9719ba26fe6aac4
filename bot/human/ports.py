"""The ports the human-interaction capability calls; a deployment implements them.

Defined here, beside the capability, because the capability is what relies
on them: the bridge's lifecycle (``bot.questions``) implements all four,
and a capability used without the bridge gets ``InMemoryConsumption``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from bot.questions.records import AuditEvent, Closing, Question


class Consumption(Protocol):
    """Records that a token was spent; redemption relies on it to refuse a replay."""

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        """True for the one caller that spent it; False if it was spent or closed already."""
        ...


class Ledger(Protocol):
    """Issued pauses; the capability writes a row when it pauses."""

    async def issue(self, record: Question) -> None: ...


@runtime_checkable
class IssuesWithTurn(Protocol):
    """A ledger that is the checkpoint store too, and saves both in one write."""

    async def issue_with_turn(self, record: Question, turn_state: dict[str, Any]) -> None:
        """Write the row and the turn state under ``record.checkpoint_id``, all or nothing."""
        ...


class Checkpoints(Protocol):
    """Versioned turn state; the capability saves it at a pause, resume loads it."""

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        """Store ``state`` under ``checkpoint_id`` (a new id when None); return the id.

        The returned id is the acknowledgement the capability measures
        ``resumable`` by; an id that exists already is refused, never overwritten.
        """
        ...

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None: ...
    async def discard(self, checkpoint_id: str) -> None:
        """Forget a checkpoint whose pause was refused; a missing id is not an error."""
        ...


class Audit(Protocol):
    """Append-only history; the capability appends what it did."""

    async def append(self, event: AuditEvent) -> None: ...


class InMemoryConsumption:
    """Spent tokens of this process only; see ``redemption_is_shared``.

    The capability's default: a token is single-use within the process, and
    unspent in any other.
    """

    def __init__(self) -> None:
        self._spent: set[str] = set()

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        del closing
        # No await between the check and the write: one event loop makes it atomic.
        if interrupt_id in self._spent:
            return False
        self._spent.add(interrupt_id)
        return True
