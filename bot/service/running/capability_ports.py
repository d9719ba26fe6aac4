"""The human capability's ports, served by the lifecycle: one object, one write per pause.

The capability (``bot.human``) calls a ledger, a checkpoint store and a
consumption port. Here all three are the lifecycle: ``issue_with_turn``
saves the paused turn with its question in the ``ask`` step's write, and
``spend`` is the ``close`` step.
"""

from __future__ import annotations

from typing import Any

from bot.human.capability import HumanInteractionCapability
from bot.questions.lifecycle import Lifecycle
from bot.questions.records import Closing, Question
from bot.stores.ports import Checkpoints, Stores


class LifecyclePorts:
    """``Ledger``, ``Checkpoints``, ``Consumption`` and ``IssuesWithTurn`` for the capability."""

    def __init__(self, lifecycle: Lifecycle, checkpoints: Checkpoints) -> None:
        self.lifecycle = lifecycle
        self._checkpoints = checkpoints

    async def issue(self, record: Question) -> None:
        await self.lifecycle.ask(record)

    async def issue_with_turn(self, record: Question, turn_state: dict[str, Any]) -> None:
        await self.lifecycle.ask(record, turn_state=turn_state)

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        return await self.lifecycle.close(interrupt_id, closing) is not None

    async def save(
        self, run_id: str, state: dict[str, Any], *, checkpoint_id: str | None = None
    ) -> str:
        return await self._checkpoints.save(run_id, state, checkpoint_id=checkpoint_id)

    async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
        return await self._checkpoints.load(checkpoint_id)

    async def discard(self, checkpoint_id: str) -> None:
        await self._checkpoints.discard(checkpoint_id)


def lifecycle_of(capability: HumanInteractionCapability, stores: Stores) -> Lifecycle:
    """The lifecycle the capability writes through, or a new one over ``stores``."""
    ports = capability.ledger
    if isinstance(ports, LifecyclePorts):
        return ports.lifecycle
    return Lifecycle(stores.unit)
