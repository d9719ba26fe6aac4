"""The capability's names and what one interaction declares: the leaf the rest imports.

Every module of ``bot.human`` (and the bridge, when it registers or answers
an interaction) needs these and nothing else of the capability, so they
stand apart from the capability's behaviour and import nothing of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.human.errors import (
    AnswerValidationError,
    HumanInteractionError,
    InteractionConfigurationError,
)

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


def _field_errors(error: ValidationError) -> dict[str, str]:
    fields: dict[str, str] = {}
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "answer"
        # Our validators' messages are sentences already; pydantic prefixes them.
        fields.setdefault(where, str(item["msg"]).removeprefix("Value error, "))
    return fields
