"""Resolve a PauseBinding from the turn that is pausing right now."""

from __future__ import annotations

from bot.human.pausing import PauseBinding
from bot.kernel.turn import current_turn


def current_run_binding(
    *,
    scope: str | None = None,
    session_id: str | None = None,
    pin: str | None = None,
    checkpoint_id: str | None = None,
) -> PauseBinding | None:
    """Fill the run's ids from the running turn; None outside a turn.

    Reading the turn at call time, not at construction, is the point: a
    binding captured once would bind every run to the first run's ids.
    """
    turn = current_turn()
    if turn is None:
        return None
    return PauseBinding(
        pin=pin if pin is not None else turn.pin,
        scope=scope if scope is not None else turn.scope,
        run_id=turn.run_id,
        root_run_id=turn.root_run_id or turn.run_id,
        session_id=session_id if session_id is not None else turn.session_id,
        thread_id=turn.thread_id,
        checkpoint_id=checkpoint_id,
    )
