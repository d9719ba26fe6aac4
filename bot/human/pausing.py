"""What a pause is bound to, what it reports, and the stage handler that pauses.

Every refusal of a pause declines (``no_change``) rather than raising: a
raise from ``pre-tool`` is a crashed stage and ends the turn, while a
decline lets the tool body hand the model a refusal it can work around.
Only ``HumanInteractionError`` is a refusal; anything else is a wiring bug
and is allowed to crash the stage so it is seen.

What a pause reports (``PauseEvent``) is built by the capability and turned
here into the ``InvocationPaused`` the stage raises; the same ledger row is
also seen as the interrupt a surface posts and as the token's claims. The
stage depends on what a pause returns, never on the capability itself: it
names what it needs of it as ``Pauser``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bot.human.errors import HumanInteractionError
from bot.human.registration import ASK_USER, InteractionRegistration
from bot.human.tokens import MintedToken, TokenClaims, arguments_digest
from bot.kernel.contracts import StageHandler, StageResult, no_change
from bot.kernel.interrupts import InvocationPaused, PendingInterrupt
from bot.kernel.state import snapshot
from bot.kernel.turn import StageContext, current_turn
from bot.questions.quorum import policy_of
from bot.questions.records import Question


@dataclass(frozen=True, slots=True)
class PauseEvent:
    """What ``pause`` reports: the envelope, its encoded token, and whether it can resume."""

    pause: MintedToken
    payload: dict[str, Any]
    tool_call_id: str
    interrupt_id: str
    run_id: str
    session_id: str
    resumable: bool
    token: str
    # The ledger row the pause wrote.
    record: Question | None = None


def pending_interrupt(record: Question, *, token: str, resumable: bool) -> PendingInterrupt:
    """A question as the pending interrupt a turn pauses with and a surface posts."""
    return PendingInterrupt(
        name=record.name,
        kind="ask_user" if record.name == ASK_USER else "interrupt",
        payload=record.payload,
        token=token,
        tool_call_id=record.tool_call_id,
        interrupt_id=record.interrupt_id,
        run_id=record.run_id,
        session_id=record.session_id,
        expires_at=record.expires_at,
        resumable=resumable,
        answerers=record.answerers,
        tally=record.tally,
        quorum=policy_of(record).quorum,
        level=record.level,
    )


def claims_for(record: Question) -> TokenClaims:
    """The token claims of a ledger row.

    Signing is deterministic, so re-encoding an outstanding row yields the
    very token first posted: tokens need never be stored at rest, and a
    surface can show an open question again after a restart.
    """
    return TokenClaims(
        jti=record.interrupt_id,
        sub=record.run_id,
        iat=int(record.issued_at),
        exp=int(record.expires_at),
        scope=record.scope,
        thread=record.thread_id,
        checkpoint=record.checkpoint_id,
        call=record.tool_call_id,
        name=record.name,
        args=arguments_digest(arguments)
        if isinstance(arguments := record.payload.get("arguments"), dict)
        else "",
    )


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
