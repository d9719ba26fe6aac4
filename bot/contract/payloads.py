"""What each kind of question asks: the ``payload`` of ``ask_user``, ``approval`` and ``form``.

Defined once, here, for every door: the server's interactions
(``bot/human/factory.py``, ``bot/interactions/approval.py``,
``bot/interactions/form.py``) import these very models, and this package
imports nothing of the server, so the client still loads without it.

They forbid unknown fields and coerce nothing, at every door: a model's
tool call is held to what a ``/v1`` request is (a ``"true"`` for a boolean
is refused, and the model is told the call did not fit). A ``form`` asked
through the tool may be longer than one asked over ``/v1``: ``FormPayload``
is the ``/v1`` model and narrows ``FormToolPayload``, the shape every
stored form question has.

A stored question's payload is ``Payload``, one of these models chosen by the
question's name (``payload_of``), or ``OtherPayload`` for a deployment's own
interaction; ``payload_json`` gives back the very JSON it was read from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self, TypeVar, assert_never

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from bot.contract.decisions import DEFAULT_ALLOW, Decision, check_allow, check_arguments
from bot.contract.form_schema import check_arguments_schema, check_form_schema

_PAYLOAD = ConfigDict(extra="forbid", strict=True, frozen=True)
V = TypeVar("V")


def _checked_by(check: Callable[[V], object]) -> AfterValidator:
    """A validator that runs ``check`` (which raises ``ValueError``) and keeps the value."""

    def validate(value: V) -> V:
        check(value)
        return value

    return AfterValidator(validate)


# Each check runs once the value has its type; a None (where allowed) is never checked.
_Arguments = Annotated[dict[str, Any], _checked_by(check_arguments)]
_ArgumentsSchema = Annotated[dict[str, Any], _checked_by(check_arguments_schema)]
_FormSchema = Annotated[dict[str, Any], _checked_by(check_form_schema)]
# check_allow also puts the decisions in their usual order.
Allow = Annotated[list[Decision], AfterValidator(check_allow)]


class AskUserOption(BaseModel):
    """One choice; labels fit a Slack button."""

    model_config = _PAYLOAD
    label: str = Field(min_length=1, max_length=75, description="The button's text.")
    description: str = Field(default="", max_length=150, description="Shown beside the label.")


class AskUserItem(BaseModel):
    """One question. No options means a free-text answer."""

    model_config = _PAYLOAD
    question: str = Field(min_length=1, max_length=500, description="What is asked.")
    header: str = Field(default="", max_length=30, description="A short heading above it.")
    options: list[AskUserOption] = Field(
        default_factory=list, max_length=10, description="The choices; empty for free text."
    )
    multi_select: bool = Field(default=False, description="Whether several options may be chosen.")

    @model_validator(mode="after")
    def _labels_unique(self) -> Self:
        labels = [option.label for option in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("option labels must be unique within a question")
        if self.multi_select and not self.options:
            raise ValueError("multi_select needs options to select from")
        return self


class AskUserPayload(BaseModel):
    """What an ``ask_user`` question asks: one to five questions."""

    model_config = _PAYLOAD
    questions: list[AskUserItem] = Field(
        min_length=1, max_length=5, description="Answered together, keyed by question text."
    )

    @model_validator(mode="after")
    def _questions_unique(self) -> Self:
        texts = [question.question for question in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("questions must be distinct; answers are keyed by question")
        return self


class ApprovalPayload(BaseModel):
    """The action awaiting approval, shown to the approver as is."""

    model_config = _PAYLOAD
    action: str = Field(min_length=1, max_length=100, description="The action's name.")
    summary: str = Field(min_length=1, max_length=1000, description="What it will do, in words.")
    arguments: _Arguments = Field(
        default_factory=dict, description="The action's arguments, shown to the approver."
    )
    risk: Literal["low", "medium", "high"] = Field(
        default="medium", description="How the approver should weigh it."
    )
    arguments_schema: _ArgumentsSchema | None = Field(
        default=None,
        description=(
            "The arguments' JSON Schema, which an edit must fit: the form subset, plus object "
            "and array properties shown as JSON. Arguments it does not list are not editable "
            "and are kept as asked. Without it an edit keeps the original keys and JSON types."
        ),
    )
    allow: Allow | None = Field(
        default=None,
        description=(
            "The decisions the approver may make: approve and reject, and edit and respond "
            "if listed. On /v1 set it beside policy; null: the deployment's default."
        ),
    )


def allowed(payload: ApprovalPayload) -> tuple[Decision, ...]:
    """The decisions ``payload``'s question allows (one that names none: approve and reject)."""
    return tuple(payload.allow) if payload.allow else DEFAULT_ALLOW


class FormToolPayload(BaseModel):
    """A form the person fills in, as the ``form`` tool takes it; ``schema`` is the MCP subset."""

    # ``schema`` would shadow BaseModel's own attribute, so the field is named
    # otherwise and travels under its alias both ways.
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, validate_by_name=True, serialize_by_alias=True
    )
    title: str = Field(min_length=1, max_length=150, description="The form's title.")
    message: str = Field(default="", max_length=3000, description="Shown above the inputs.")
    form_schema: _FormSchema = Field(
        alias="schema",
        description=(
            'A flat JSON Schema: {"type": "object", "properties": {...}, "required": [...]}; '
            "each property a string (minLength, maxLength, format email/uri/date/date-time, "
            "or enum), number or integer (minimum, maximum), boolean, or array of enum "
            "strings, with optional title, description and default."
        ),
    )


class FormPayload(FormToolPayload):
    """A form asked over ``/v1``: a shorter title and a message it must carry."""

    title: str = Field(min_length=1, max_length=100, description="The form's title.")
    message: str = Field(min_length=1, max_length=1000, description="Shown above the inputs.")


@dataclass(frozen=True, slots=True)
class OtherPayload:
    """What a question asks that none of the bridge's own kinds fits: a deployment's own
    interaction (its payload model is its own), or a row of a kind whose shape it no longer
    has. Kept as the JSON object it is, since no model here knows its fields."""

    values: Mapping[str, Any]


# What a stored question asks, one variant per kind of question; match it exhaustively.
Payload = AskUserPayload | ApprovalPayload | FormToolPayload | OtherPayload

_MODELS: dict[str, type[AskUserPayload | ApprovalPayload | FormToolPayload]] = {
    "ask_user": AskUserPayload,
    "approval": ApprovalPayload,
    "form": FormToolPayload,
}


def payload_of(name: str, values: Mapping[str, Any]) -> Payload:
    """The payload of a question called ``name``, parsed once (where a row becomes a
    ``Question``, or a question is asked): the kind's model when it fits, else
    ``OtherPayload``."""
    model = _MODELS.get(name)
    if model is not None:
        try:
            return model.model_validate(values)
        except ValidationError:
            pass  # a row written under another shape still draws, as what it holds
    return OtherPayload(dict(values))


def payload_model(name: str) -> type[AskUserPayload | ApprovalPayload | FormToolPayload] | None:
    """The model ``payload_of`` parses a question called ``name`` with; None: none."""
    return _MODELS.get(name)


def payload_json(payload: Payload) -> dict[str, Any]:
    """The payload as its row holds it: the fields it was given, as they were given, so a
    row read and written back keeps the very JSON it held."""
    match payload:
        case AskUserPayload() | ApprovalPayload() | FormToolPayload():
            return payload.model_dump(mode="json", exclude_unset=True)
        case OtherPayload(values=values):
            return dict(values)
        case _:
            assert_never(payload)
