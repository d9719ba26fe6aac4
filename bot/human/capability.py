"""The human-interaction capability: registrations, and the act of pausing.

Below the class are the writes of one pause, in the order ``pause`` makes
them so that it is all or nothing: the checkpoint first (the token names its
id), then the token encoded and length-checked, then the audit event, and the
ledger row last, because the row is what makes a question outstanding. A step
that fails undoes the ones before it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeGuard, TypeVar, cast

from bot.contract.models import Policy
from bot.contract.payloads import payload_of
from bot.human.contribution import build_contribution
from bot.human.errors import (
    AnswerValidationError,
    HumanInteractionError,
    InteractionConfigurationError,
)
from bot.human.pause_event import PauseEvent, claims_for
from bot.human.ports import Audit, Checkpoints, Consumption, IssuesWithTurn, Ledger
from bot.human.registration import ASK_USER, CAPABILITY_NAME, InteractionRegistration
from bot.human.tokens import MAX_TOKEN_CHARS, MintedToken, TokenClaims, TokenError, TokenSigner
from bot.human.ttl import DEFAULT_TTL, TTLPolicy
from bot.kernel.contracts import CapabilityContribution, CapabilityRequest
from bot.questions.records import AuditEvent, Question

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
log = logging.getLogger(__name__)
T = TypeVar("T")


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
        policies: Mapping[str, Policy] | None = None,
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
        # The last ledger checked against ``IssuesWithTurn``, and whether it is one.
        self._joint_checked: tuple[object, bool] | None = None

    def _issues_with_turn(self, ledger: object) -> TypeGuard[IssuesWithTurn]:
        checked = self._joint_checked
        if checked is None or checked[0] is not ledger:
            checked = self._joint_checked = (ledger, isinstance(ledger, IssuesWithTurn))
        return checked[1]

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
        # Checked once per ledger: a runtime protocol check walks every member of the protocol.
        ledger = self.ledger
        joint = (
            ledger
            if checkpoint_id is None
            and self.checkpoints is not None
            and cast(object, ledger) is self.checkpoints
            and self._issues_with_turn(ledger)
            else None
        )
        if joint is not None:
            checkpoint, resumable = f"{run_id}:{secrets.token_hex(8)}", True
        else:
            checkpoint, resumable = await _record_turn(
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
                payload=payload_of(name, clean),
                issued_at=float(int(now)),
                expires_at=float(int(now + ttl.total_seconds())),
                policy=self.policies.get(name),
            )
            minted = self.signer.mint(claims_for(record))
            token = _encoded(encode, minted)
            if joint is not None:
                await _port_call("issuance ledger", joint.issue_with_turn(record, turn_state))
            else:
                await _issue(ledger, self.audit, record, now)
        except BaseException:
            if resumable and joint is None:
                await _discard(self.checkpoints, checkpoint)
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


# A store having a bad minute is a refusal (the model is told, the turn goes
# on); a port wired wrong is a bug that must crash the stage and be seen.
_WIRING_BUGS = (TypeError, AttributeError)


async def _port_call(port: str, call: Awaitable[T]) -> T:
    """Await a store call; a store's bad minute becomes a refusal, a wiring bug stays a crash."""
    try:
        return await call
    except _WIRING_BUGS:
        raise
    except Exception as error:
        raise HumanInteractionError(
            f"the {port} refused the pause ({type(error).__name__})"
        ) from error


async def _record_turn(
    checkpoints: Checkpoints | None,
    run_id: str,
    checkpoint_id: str | None,
    turn_state: dict[str, Any],
) -> tuple[str, bool]:
    """The checkpoint id the pause binds to, and whether our store acknowledged the state.

    A bound id is used as given. With no store, the deployment's own saver
    holds the state under that id and nothing here measured a write, so the
    pause says ``resumable=False``. With a store, the state is saved under
    the bound id (or a new one) and the store must answer with that id;
    anything else is a refusal.
    """
    if checkpoints is None:
        if checkpoint_id is None:
            raise HumanInteractionError(
                "no checkpoint id was bound and no checkpoint store is configured, "
                "so the paused turn could never be continued"
            )
        return checkpoint_id, False
    if checkpoint_id is None:
        saving = checkpoints.save(run_id, turn_state)
    else:
        saving = checkpoints.save(run_id, turn_state, checkpoint_id=checkpoint_id)
    saved = await _port_call("checkpoint store", saving)
    if not saved or (checkpoint_id is not None and saved != checkpoint_id):
        if saved:
            await _discard(checkpoints, saved)
        raise HumanInteractionError(
            f"the checkpoint store did not acknowledge the turn state (it answered {saved!r})"
        )
    return saved, True


async def _discard(checkpoints: Checkpoints | None, checkpoint_id: str) -> None:
    """Undo a checkpoint write; best effort, because the pause is refused either way."""
    if checkpoints is None:
        return
    try:
        await checkpoints.discard(checkpoint_id)
    except Exception:
        # An unreferenced checkpoint is garbage, not a question anyone can see.
        log.warning("could not discard checkpoint %s", checkpoint_id, exc_info=True)


def _encoded(encode: Callable[[MintedToken], str], minted: MintedToken) -> str:
    """Encode and length-check the token before anything outstanding exists."""
    try:
        token = encode(minted)
    except TokenError as error:
        raise HumanInteractionError(f"the resume token could not be encoded: {error}") from error
    if not isinstance(token, str) or not token or len(token) >= MAX_TOKEN_CHARS:
        size = len(token) if isinstance(token, str) else 0
        raise HumanInteractionError(
            f"the encoder returned no usable resume token ({size} characters; it must be "
            f"non-empty and under {MAX_TOKEN_CHARS})"
        )
    return token


async def _issue(ledger: Ledger | None, audit: Audit | None, record: Question, now: float) -> None:
    """Audit, then write the row; a row that could not be written withdraws the audit event.

    The audit log is append-only, so the undo is a second event rather than
    a deletion; the ledger row, written last, needs no undo.
    """
    detail = {"name": record.name}
    if audit is not None:
        paused = AuditEvent(now, "paused", record.run_id, record.interrupt_id, detail=detail)
        await _port_call("audit log", audit.append(paused))
    if ledger is None:
        return
    try:
        await _port_call("issuance ledger", ledger.issue(record))
    except BaseException:
        if audit is not None:
            withdrawn = AuditEvent(
                now, "pause-withdrawn", record.run_id, record.interrupt_id, detail=detail
            )
            try:
                await audit.append(withdrawn)
            except Exception:
                log.warning("could not audit a withdrawn pause", exc_info=True)
        raise
