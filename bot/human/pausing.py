"""What a pause is bound to, and the stage handler that pauses.

Every refusal of a pause declines (``no_change``) rather than raising: a
raise from ``pre-tool`` is a crashed stage and ends the turn, while a
decline lets the tool body hand the model a refusal it can work around.
Only ``HumanInteractionError`` is a refusal; anything else is a wiring bug
and is allowed to crash the stage so it is seen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from bot.human.errors import HumanInteractionError
from bot.human.pause_event import PauseEvent, pending_interrupt
from bot.human.registration import InteractionRegistration
from bot.human.tokens import MintedToken
from bot.kernel.contracts import StageHandler, StageResult, no_change
from bot.kernel.interrupts import InvocationPaused
from bot.kernel.state import snapshot

if TYPE_CHECKING:
    from bot.kernel.turn import StageContext


class Pauser(Protocol):
    """What the pause stage needs of the capability (``HumanInteractionCapability``): which
    calls are interactions, and the all-or-nothing pause itself."""

    def registration(self, name: str) -> InteractionRegistration | None: ...

    async def pause(
        self,
        *,
        pin: Any,
        scope: Any,
        run_id: str,
        root_run_id: str,
        session_id: str,
        thread_id: str,
        payload: Any,
        name: str,
        tool_call_id: str,
        checkpoint_id: str | None,
        turn_state: dict[str, Any],
        encode_token: Callable[[MintedToken], str] | None = None,
    ) -> PauseEvent: ...


@dataclass(frozen=True, slots=True)
class PauseBinding:
    """The run a pause belongs to, resolved per run by the composition root.

    Resolved through a callable, never captured at construction: none of
    these facts is known when the plan is compiled. ``checkpoint_id`` None
    means the capability's checkpoint store assigns one.
    """

    pin: Any = None
    scope: Any = None
    run_id: str = ""
    root_run_id: str = ""
    session_id: str = ""
    thread_id: str = ""
    checkpoint_id: str | None = None


def pause_handler(
    capability: Pauser,
    binding: Callable[[], PauseBinding | None],
    encode_token: Callable[[MintedToken], str],
) -> StageHandler:
    """Build the handler that turns a reserved interaction call into a pause."""

    async def handle(context: StageContext) -> StageResult[Any]:
        pending = [call for call in context.requests if capability.registration(call.name)]
        if not pending:
            return no_change("this round asked for no registered interaction")
        resolved = binding()
        if resolved is None:
            return no_change("no pause binding was resolved for this run")
        # Only the first: the run stops either way, and a second token now
        # would be an outstanding ledger row for a question never asked. The
        # resume re-runs this stage, which then pauses on the next one.
        call = pending[0]
        # The pin rides in the checkpoint's request, so the resumed turn (and
        # any binding resolved in it) sees the pin this pause was taken under.
        pinned = context.request
        if resolved.pin is not None:
            pinned = dataclasses.replace(context.request, pin=str(resolved.pin))
        try:
            event = await capability.pause(
                pin=resolved.pin,
                scope=resolved.scope,
                run_id=resolved.run_id,
                root_run_id=resolved.root_run_id or context.request.root_run_id or resolved.run_id,
                session_id=resolved.session_id,
                thread_id=resolved.thread_id,
                payload=call.arguments,
                name=call.name,
                tool_call_id=call.call_id,
                checkpoint_id=resolved.checkpoint_id,
                turn_state=snapshot(pinned, context.state),
                encode_token=encode_token,
            )
        except HumanInteractionError as refused:
            return no_change(f"the {call.name!r} pause was refused, no token minted: {refused}")
        assert event.record is not None  # the capability's own pause always reports it
        raise InvocationPaused(
            pending_interrupt(event.record, token=event.token, resumable=event.resumable)
        )

    return handle
