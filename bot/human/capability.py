"""The human-interaction capability: registrations, and the act of pausing."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.errors import BotError
from bot.human.tokens import MintedPause, PauseClaims, TokenSigner
from bot.human.ttl import DEFAULT_TTL, TTLPolicy
from bot.kernel.contracts import CapabilityContribution, CapabilityRequest
from bot.stores.ports import Audit, Checkpoints, Consumption, Ledger
from bot.stores.records import AuditEvent, PauseRecord

CAPABILITY_NAME = "human-interaction"
ASK_USER = "ask_user"

# A store having a bad minute is a refusal (the model is told, the turn goes
# on); a port wired wrong is a bug that must crash the stage and be seen.
_WIRING_BUGS = (TypeError, AttributeError)


class HumanInteractionError(BotError):
    """A pause was refused; no token was minted."""


class InteractionConfigurationError(HumanInteractionError):
    """The capability was composed so that it could never pause; says what is missing."""


class AnswerValidationError(BotError):
    """An answer does not fit the response schema; ``fields`` says where."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in fields.items()))
        self.fields = dict(fields)


@dataclass(frozen=True, slots=True)
class InteractionRegistration:
    """One interaction an agent may pause on, with the shapes of both sides."""

    name: str
    payload_schema: type[BaseModel]
    response_schema: type[BaseModel]
    cross_scope_allowed: bool = False
    ttl: timedelta | None = None

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
    """What ``pause`` reports: the envelope to encode and whether it can resume."""

    pause: MintedPause
    payload: dict[str, Any]
    tool_call_id: str
    interrupt_id: str
    run_id: str
    session_id: str
    resumable: bool


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
        decode_token: Callable[..., Any] | None = None,
        ask_user_description: str | None = None,
        ledger: Ledger | None = None,
        checkpoints: Checkpoints | None = None,
        audit: Audit | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._registrations = dict(registrations)
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
        return self._registrations.get(name)

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
    ) -> PauseEvent:
        """Record the turn, issue the ledger row and mint the token, or refuse."""
        del pin  # Carried by the binding for deployments; the ledger has no use for it.
        registration = self._registrations.get(name)
        if registration is None:
            raise HumanInteractionError(f"{name!r} is not a registered interaction")
        clean = registration.validate_payload(payload)
        checkpoint, resumable = await self._record_turn(run_id, checkpoint_id, turn_state)
        now = self.clock()
        ttl = self.ttl.for_interaction(name, registration.ttl)
        record = PauseRecord(
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
        )
        if self.ledger is not None:
            try:
                await self.ledger.issue(record)
            except _WIRING_BUGS:
                raise
            except Exception as error:
                raise HumanInteractionError(
                    f"the issuance ledger refused the pause ({type(error).__name__})"
                ) from error
        if self.audit is not None:
            event = AuditEvent(now, "paused", run_id, record.interrupt_id, detail={"name": name})
            await self.audit.append(event)
        return PauseEvent(
            pause=self.signer.mint(claims_for(record)),
            payload=clean,
            tool_call_id=tool_call_id,
            interrupt_id=record.interrupt_id,
            run_id=run_id,
            session_id=session_id,
            resumable=resumable,
        )

    async def _record_turn(
        self, run_id: str, checkpoint_id: str | None, turn_state: dict[str, Any]
    ) -> tuple[str, bool]:
        if self.checkpoints is None:
            if checkpoint_id is None:
                raise HumanInteractionError(
                    "no checkpoint id was bound and no checkpoint store is configured, "
                    "so the paused turn could never be continued"
                )
            return checkpoint_id, False
        try:
            return await self.checkpoints.save(run_id, turn_state), True
        except _WIRING_BUGS:
            raise
        except Exception as error:
            raise HumanInteractionError(
                f"the checkpoint store refused the turn state ({type(error).__name__})"
            ) from error


def claims_for(record: PauseRecord) -> PauseClaims:
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
