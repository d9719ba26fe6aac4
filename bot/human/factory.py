"""Human interaction as one call a composition root can make.

The signer has no default on purpose: a default key would be every
deployment's key, and each would honour the others' tokens. Consumption
does default, to a single-process record; ``redemption_is_shared`` says
which one a deployment ended up with instead of leaving it to a replay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

# The payload is defined once, with the client (``bot/contract/payloads.py``), for every door.
from bot.contract.payloads import AskUserItem as AskUserItem
from bot.contract.payloads import AskUserOption as AskUserOption
from bot.contract.payloads import AskUserPayload as AskUserPayload
from bot.human.capability import (
    HumanInteractionCapability,
    InteractionConfigurationError,
    InteractionRegistration,
)
from bot.human.ports import Consumption, InMemoryConsumption
from bot.human.tokens import MintedToken, TokenClaims, TokenSigner
from bot.human.ttl import DEFAULT_TTL, TTLPolicy

MAX_FREE_TEXT = 2000


class AskUserResponse(BaseModel):
    """What the person answers, keyed by question text.

    Validated with ``context={"payload": ...}`` so each answer is checked
    against the options actually asked, not just for shape.
    """

    model_config = ConfigDict(extra="forbid")
    answers: dict[str, str | list[str]]

    @model_validator(mode="after")
    def _fits_the_questions(self, info: ValidationInfo) -> Self:
        payload = (info.context or {}).get("payload")
        if payload is None:
            return self
        asked = AskUserPayload.model_validate(payload)
        known = {question.question for question in asked.questions}
        extra = set(self.answers) - known
        if extra:
            raise ValueError(f"answers name questions that were not asked: {sorted(extra)}")
        for question in asked.questions:
            _check_answer(question, self.answers.get(question.question))
        return self


def _check_answer(question: AskUserItem, answer: str | list[str] | None) -> None:
    labels = [option.label for option in question.options]
    where = question.header or question.question
    if answer is None or answer == "" or answer == []:
        raise ValueError(f"{where!r} needs an answer")
    if question.multi_select:
        chosen = [answer] if isinstance(answer, str) else answer
        # Bounded first, so a long list costs nothing before it is refused.
        if len(chosen) > len(labels):
            raise ValueError(f"{where!r}: choose at most {len(labels)} of the options")
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"{where!r}: each option may be chosen once")
        unknown = [choice for choice in chosen if choice not in labels]
        if unknown:
            raise ValueError(f"{where!r}: {unknown} are not among the options")
    elif isinstance(answer, list):
        raise ValueError(f"{where!r} takes one answer")
    elif labels and answer not in labels:
        raise ValueError(f"{where!r}: {answer!r} is not one of {labels}")
    elif len(answer) > MAX_FREE_TEXT:
        raise ValueError(f"{where!r}: keep the answer under {MAX_FREE_TEXT} characters")


def ask_user_registration(*, cross_scope_allowed: bool = False) -> InteractionRegistration:
    """``ask_user`` with schemas that validate; cross-scope answers stay refused."""
    return InteractionRegistration.ask_user(
        payload_schema=AskUserPayload,
        response_schema=AskUserResponse,
        cross_scope_allowed=cross_scope_allowed,
    )


def human_interaction(
    *,
    signer: TokenSigner,
    binding: Callable[[], Any],
    encode_token: Callable[[MintedToken], str],
    decode_token: Callable[[str], TokenClaims] | None = None,
    registrations: Iterable[InteractionRegistration] | None = None,
    ttl: TTLPolicy | None = None,
    ask_user_description: str | None = None,
    consumption: Consumption | None = None,
    **options: Any,
) -> HumanInteractionCapability:
    """Build the capability that lets a turn pause and be resumed.

    ``options`` go to ``HumanInteractionCapability.compile``: ledger,
    checkpoints, audit and clock. Raises InteractionConfigurationError,
    naming what is missing, rather than return a capability that would
    never offer a tool.
    """
    missing = [
        name
        for name, value in (
            ("signer", signer),
            ("binding", binding),
            ("encode_token", encode_token),
        )
        if value is None
    ]
    if missing:
        raise InteractionConfigurationError(
            f"human_interaction needs {', '.join(missing)}; without it no pause can be "
            "minted or answered."
        )
    declared = tuple(registrations) if registrations is not None else (ask_user_registration(),)
    if not declared:
        raise InteractionConfigurationError(
            "no interaction is registered, so the capability would offer no tool and never "
            "pause. Pass registrations, or leave the argument out to get ask_user."
        )
    if ask_user_description is not None and not ask_user_description.strip():
        raise InteractionConfigurationError(
            "ask_user_description is blank; give the model some text or leave it out."
        )
    return HumanInteractionCapability.compile(
        declared,
        signer=signer,
        ttl=ttl if ttl is not None else DEFAULT_TTL,
        ask_user_description=ask_user_description,
        consumption=consumption if consumption is not None else InMemoryConsumption(),
        binding=binding,
        encode_token=encode_token,
        decode_token=decode_token,
        **options,
    )


def redemption_is_shared(consumption: Consumption) -> bool:
    """Whether every process sharing the store agrees a token was spent."""
    return not isinstance(consumption, InMemoryConsumption)
