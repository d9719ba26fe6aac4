"""The human-interaction capability: registrations, and the act of pausing."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from bot.human import _issuing
from bot.human.contribution import build_contribution
from bot.human.errors import (
    AnswerValidationError,
    HumanInteractionError,
    InteractionConfigurationError,
)
from bot.human.pausing import PauseEvent, claims_for
from bot.human.ports import Audit, Checkpoints, Consumption, IssuesWithTurn, Ledger
from bot.human.registration import ASK_USER, CAPABILITY_NAME, InteractionRegistration
from bot.human.tokens import MintedToken, TokenClaims, TokenSigner
from bot.human.ttl import DEFAULT_TTL, TTLPolicy
from bot.kernel.contracts import CapabilityContribution, CapabilityRequest
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
        encode_token: Callable[[MintedToken], str] | None,
        decode_token: Callable[[str], TokenClaims] | None = None,
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
        encode_token: Callable[[MintedToken], str] | None,
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
        encode_token: Callable[[MintedToken], str] | None = None,
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
