"""The human-interaction capability: registrations, and the act of pausing."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from bot.human import _issuing
from bot.human.errors import (
    AnswerValidationError,
    HumanInteractionError,
    InteractionConfigurationError,
)
from bot.human.ports import Audit, Checkpoints, Consumption, IssuesWithTurn, Ledger
from bot.human.tokens import MintedPause, PauseClaims, TokenSigner
from bot.human.ttl import DEFAULT_TTL, TTLPolicy
from bot.kernel.contracts import CapabilityContribution, CapabilityRequest
from bot.kernel.interrupts import PendingInterrupt
from bot.questions.quorum import policy_of
from bot.questions.records import Question

__all__ = [
    "ASK_USER",
    "CAPABILITY_NAME",
    "AnswerValidationError",
    "HumanInteractionCapability",
    "HumanInteractionError",
    "InteractionConfigurationError",
    "InteractionRegistration",
    "PauseEvent",
    "claims_for",
]

CAPABILITY_NAME = "human-interaction"
ASK_USER = "ask_user"


@dataclass(frozen=True, slots=True)
class InteractionRegistration:
    """One interaction an agent may pause on, with the shapes of both sides."""

    name: str
    payload_schema: type[BaseModel]
    response_schema: type[BaseModel]
    cross_scope_allowed: bool = False
    ttl: timedelta | None = None

    def __post_init__(self) -> None:
        if self.ttl is not None and self.ttl <= timedelta(0):
            raise InteractionConfigurationError(
                f"interaction {self.name!r} has a TTL of {self.ttl}; a pause must stay open "
                "for a positive time. Pass a positive ttl, or None for the policy's default."
            )

    @classmethod
    def ask_user(
        cls,
        *,
        payload_schema: type[BaseModel],
        response_schema: type[BaseModel],
        cross_scope_allowed: bool = False,
        ttl: timedelta | None = None,
    ) -> InteractionRegistration:
        return cls(ASK_USER, payload_schema, response_schema, cross_scope_allowed, ttl)

    def validate_payload(self, payload: Any) -> dict[str, Any]:
        try:
            return self.payload_schema.model_validate(payload).model_dump(mode="json")
        except ValidationError as error:
            raise HumanInteractionError(
                f"the payload does not fit {self.name!r}: {_field_errors(error)}"
            ) from error

    def validate_answer(self, answer: Any, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Check an answer against the response schema and the question asked."""
        try:
            model = self.response_schema.model_validate(answer, context={"payload": payload})
        except ValidationError as error:
            raise AnswerValidationError(_field_errors(error)) from error
        return model.model_dump(mode="json")


@dataclass(frozen=True, slots=True)
class PauseEvent:
    """What ``pause`` reports: the envelope, its encoded token, and whether it can resume."""

    pause: MintedPause
    payload: dict[str, Any]
    tool_call_id: str
    interrupt_id: str
    run_id: str
    session_id: str
    resumable: bool
    token: str
    # The ledger row the pause wrote.
    record: Question | None = None


Clock = Callable[[], float]


class HumanInteractionCapability:
    """Lets a turn stop at a registered interaction and be resumed by a person."""

    name = CAPABILITY_NAME

    def __init__(
        self,
        registrations: Mapping[str, InteractionRegistration],
        *,
        signer: TokenSigner,
        ttl: TTLPolicy,
        consumption: Consumption,
        binding: Callable[[], Any] | None,
        encode_token: Callable[[MintedPause], str] | None,
        decode_token: Callable[[str], PauseClaims] | None = None,
        ask_user_description: str | None = None,
        ledger: Ledger | None = None,
        checkpoints: Checkpoints | None = None,
        audit: Audit | None = None,
        clock: Clock | None = None,
        policies: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        self._registrations = dict(registrations)
        # Per interaction, the approval policy its questions carry (``bot.questions.quorum``).
        self.policies = dict(policies or {})
        # Questions asked from outside the agent (the agents API): answerable, no tool.
        self._accepted: dict[str, InteractionRegistration] = {}
        self.signer = signer
        self.ttl = ttl
        self.consumption = consumption
        self.binding = binding
        self.encode_token = encode_token
        self.decode_token = decode_token
        self.ask_user_description = ask_user_description
        self.ledger = ledger
        self.checkpoints = checkpoints
        self.audit = audit
        self.clock: Clock = clock or time.time

    @classmethod
    def compile(
        cls,
        registrations: Iterable[InteractionRegistration],
        *,
        signer: TokenSigner,
        ttl: TTLPolicy = DEFAULT_TTL,
        consumption: Consumption,
        binding: Callable[[], Any] | None,
        encode_token: Callable[[MintedPause], str] | None,
        **options: Any,
    ) -> HumanInteractionCapability:
        by_name: dict[str, InteractionRegistration] = {}
        for registration in registrations:
            if registration.name in by_name:
                raise InteractionConfigurationError(
                    f"interaction {registration.name!r} is registered twice; names must be unique."
                )
            by_name[registration.name] = registration
        return cls(
            by_name,
            signer=signer,
            ttl=ttl,
            consumption=consumption,
            binding=binding,
            encode_token=encode_token,
            **options,
        )

    @property
    def active(self) -> bool:
        return bool(self._registrations)

    def names(self) -> tuple[str, ...]:
        return tuple(self._registrations)

    def registration(self, name: str) -> InteractionRegistration | None:
        return self._registrations.get(name) or self._accepted.get(name)

    def accept(self, registration: InteractionRegistration) -> None:
        """Answer questions of ``registration`` that were asked from outside the agent.

        The agent is offered no tool for it, and an interaction the agent
        registered itself is kept as the agent declared it.
        """
        self._accepted.setdefault(registration.name, registration)

    def parameters_schema(self, tool_name: str) -> dict[str, Any] | None:
        """The JSON schema a bound tool advertises: the payload's own."""
        registration = self._registrations.get(tool_name)
        return None if registration is None else registration.payload_schema.model_json_schema()

    def contribute(self, request: CapabilityRequest) -> CapabilityContribution:
        # Imported here: contribution imports this module for its types.
        from bot.human.contribution import build_contribution

        return build_contribution(
            self, request, binding=self.binding, encode_token=self.encode_token
        )

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
        encode_token: Callable[[MintedPause], str] | None = None,
    ) -> PauseEvent:
        """Save the turn, encode the token, audit, issue the ledger row -- or refuse.

        All or nothing. The ledger row is written last because it is what
        makes a pause outstanding; every step before it is either free of
        writes (validation, encoding) or undone when a later step fails (the
        checkpoint is discarded, a written audit event is followed by a
        withdrawal). So a refusal never leaves an outstanding row or a
        checkpoint nothing refers to. ``pin`` travels inside ``turn_state``:
        the stage snapshots the turn with the binding's pin, and a resume
        reads it back from the checkpoint.
        """
        del pin
        registration = self._registrations.get(name)
        if registration is None:
            raise HumanInteractionError(f"{name!r} is not a registered interaction")
        encode = encode_token or self.encode_token
        if encode is None:
            raise HumanInteractionError("no token encoder is configured, so no pause can be minted")
        clean = registration.validate_payload(payload)
        # One object serving as both ledger and checkpoint store saves the turn
        # with the row in one write: the write's success is the acknowledgement.
        # Checked once: a runtime protocol check walks every member of the protocol.
        ledger = self.ledger
        joint = (
            ledger
            if checkpoint_id is None
            and self.checkpoints is not None
            and cast(object, ledger) is self.checkpoints
            and isinstance(ledger, IssuesWithTurn)
            else None
        )
        if joint is not None:
            checkpoint, resumable = f"{run_id}:{secrets.token_hex(8)}", True
        else:
            checkpoint, resumable = await _issuing.record_turn(
                self.checkpoints, run_id, checkpoint_id, turn_state
            )
        try:
            now = self.clock()
            ttl = self.ttl.for_interaction(name, registration.ttl)
            record = Question(
                interrupt_id=f"int_{secrets.token_hex(12)}",
                run_id=run_id,
                root_run_id=root_run_id,
                session_id=session_id,
                thread_id=thread_id,
                scope=str(scope or ""),
                name=name,
                tool_call_id=tool_call_id,
                checkpoint_id=checkpoint,
                payload=clean,
                issued_at=float(int(now)),
                expires_at=float(int(now + ttl.total_seconds())),
                policy=self.policies.get(name),
            )
            minted = self.signer.mint(claims_for(record))
            token = _issuing.encoded(encode, minted)
            if joint is not None:
                await _issuing.port_call(
                    "issuance ledger", joint.issue_with_turn(record, turn_state)
                )
            else:
                await _issuing.issue(ledger, self.audit, record, now)
        except BaseException:
            if resumable and joint is None:
                await _issuing.discard(self.checkpoints, checkpoint)
            raise
        return PauseEvent(
            pause=minted,
            payload=clean,
            tool_call_id=tool_call_id,
            interrupt_id=record.interrupt_id,
            run_id=run_id,
            session_id=session_id,
            resumable=resumable,
            token=token,
            record=record,
        )


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


def claims_for(record: Question) -> PauseClaims:
    """The token claims of a ledger row.

    Signing is deterministic, so re-encoding an outstanding row yields the
    very token first posted: tokens need never be stored at rest, and a
    surface can show an open question again after a restart.
    """
    return PauseClaims(
        jti=record.interrupt_id,
        sub=record.run_id,
        iat=int(record.issued_at),
        exp=int(record.expires_at),
        scope=record.scope,
        thread=record.thread_id,
        checkpoint=record.checkpoint_id,
        call=record.tool_call_id,
        name=record.name,
    )


def _field_errors(error: ValidationError) -> dict[str, str]:
    fields: dict[str, str] = {}
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "answer"
        # Our validators' messages are sentences already; pydantic prefixes them.
        fields.setdefault(where, str(item["msg"]).removeprefix("Value error, "))
    return fields
