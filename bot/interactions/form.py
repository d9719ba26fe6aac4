"""``form``: a person fills in a form drawn from a flat JSON Schema; the answer is its object.

The payload is ``{"title", "message", "schema"}``, the schema in the subset
MCP elicitation allows (``bot/contract/form_schema.py``, the one checker the
agents API and its client use too). Unlike ``ask_user`` and
``approval`` the answer's shape is not fixed by the registration: it is the
schema the question carries, so the registration checks each answer against
its own question's schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import RootModel

from bot.contract.errors import FormAnswerError
from bot.contract.form_schema import check_form_answer

# The payload is defined once, with the client; ``/v1`` narrows it (``FormPayload``).
from bot.contract.payloads import FormToolPayload as FormToolPayload
from bot.human.capability import InteractionRegistration
from bot.human.contribution import refusing_tool_spec
from bot.human.errors import AnswerValidationError
from bot.kernel.tools import Tool, bind_contributed_tool

FORM = "form"
FORM_REFUSAL = (
    "The form could not be shown: this run cannot pause, or the call did not fit "
    "(title, message, and a flat JSON Schema of string, number, integer, boolean and "
    "enum fields). Do not assume any answer."
)


class FormResponse(RootModel[dict[str, Any]]):
    """The schema's object, e.g. ``{"name": "Ada", "age": 36}``; checked by the registration."""


@dataclass(frozen=True, slots=True)
class FormRegistration(InteractionRegistration):
    """``form``'s registration: each answer is checked against its question's schema."""

    def validate_answer(self, answer: Any, payload: Mapping[str, Any]) -> dict[str, Any]:
        try:
            # The seeds' ``validate_answer`` hands the question's payload over as its JSON.
            return check_form_answer(dict(payload.get("schema") or {}), answer)
        except FormAnswerError as error:
            raise AnswerValidationError(error.fields) from error


def form_registration(*, ttl: timedelta | None = None) -> InteractionRegistration:
    return FormRegistration(
        name=FORM, payload_schema=FormToolPayload, response_schema=FormResponse, ttl=ttl
    )


def form_tool() -> Tool:
    """A kernel agent's door to ``form``, advertising the payload's own schema."""
    spec = refusing_tool_spec(
        FORM,
        (
            "Ask a person to fill in a form (a flat JSON Schema of fields). Stop until "
            "they submit it; the answer is an object with the schema's fields."
        ),
        refusal=FORM_REFUSAL,
        parameters=("title", "message", "schema"),
    )
    return bind_contributed_tool(spec, parameters_schema=FormToolPayload.model_json_schema())
