"""What a pause reports, and a ledger row seen as the interrupt and as the token's claims.

The pause stage (``pausing``) turns the report into the ``InvocationPaused``
it raises; the capability builds it. Standing apart, it lets the stage
depend on what a pause returns without depending on the capability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
    payload_json,
)
from bot.human.registration import ASK_USER
from bot.human.tokens import MintedToken, TokenClaims, arguments_digest
from bot.kernel.interrupts import PendingInterrupt
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
    """A question as the pending interrupt a turn pauses with (the seeds' shape)."""
    return PendingInterrupt(
        name=record.name,
        kind="ask_user" if record.name == ASK_USER else "interrupt",
        payload=payload_json(record.payload),
        token=token,
        tool_call_id=record.tool_call_id,
        interrupt_id=record.interrupt_id,
        run_id=record.run_id,
        session_id=record.session_id,
        expires_at=record.expires_at,
        resumable=resumable,
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
        args=_arguments_digest(record.payload),
    )


def _arguments_digest(payload: Payload) -> str:
    """The digest of the arguments a question asks about, '' for one that carries none (a
    row stored without them included, so a token minted for it stays good)."""
    match payload:
        case ApprovalPayload():
            return (
                arguments_digest(payload.arguments)
                if "arguments" in payload.model_fields_set
                else ""
            )
        case OtherPayload(values=values):
            # A deployment's own interaction may ask about arguments under the same key.
            arguments = values.get("arguments")
            return arguments_digest(arguments) if isinstance(arguments, dict) else ""
        case AskUserPayload() | FormToolPayload():
            return ""
        case _:
            assert_never(payload)
