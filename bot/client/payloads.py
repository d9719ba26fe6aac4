"""What each kind of question asks: the ``payload`` of ``ask_user``, ``approval`` and ``form``.

They mirror the server's own (``bot/human/factory.py``, ``bot/interactions/approval.py``,
``bot/interactions/form.py``), limits included, without importing them; a test compares
their schemas so the two cannot drift.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.client.decisions import Decision, check_allow, check_arguments
from bot.client.form_schema import check_arguments_schema, check_form_schema

_REQUEST = ConfigDict(extra="forbid", strict=True)


class AskUserOption(BaseModel):
    """One choice; labels fit a Slack button."""

    model_config = _REQUEST
    label: str = Field(min_length=1, max_length=75, description="The button's text.")
    description: str = Field(default="", max_length=150, description="Shown beside the label.")


class AskUserItem(BaseModel):
    """One question. No options means a free-text answer."""

    model_config = _REQUEST
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

    model_config = _REQUEST
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

    model_config = _REQUEST
    action: str = Field(min_length=1, max_length=100, description="The action's name.")
    summary: str = Field(min_length=1, max_length=1000, description="What it will do, in words.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The action's arguments, shown to the approver."
    )
    risk: Literal["low", "medium", "high"] = Field(
        default="medium", description="How the approver should weigh it."
    )
    arguments_schema: dict[str, Any] | None = Field(
        default=None,
        description=(
            "The arguments' JSON Schema, which an edit must fit: the form subset, plus object "
            "and array properties shown as JSON. Without it an edit keeps the original keys "
            "and JSON types."
        ),
    )
    allow: list[Decision] | None = Field(
        default=None,
        description=(
            "The decisions the approver may make: approve and reject, and edit and respond "
            "if listed. On /v1 set it beside policy; null: the deployment's default."
        ),
    )

    @field_validator("arguments")
    @classmethod
    def _small(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        check_arguments(arguments)
        return arguments

    @field_validator("arguments_schema")
    @classmethod
    def _in_the_subset(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            check_arguments_schema(schema)
        return schema

    @field_validator("allow")
    @classmethod
    def _known(cls, allow: list[Decision] | None) -> list[Decision] | None:
        return None if allow is None else check_allow(allow)


class FormPayload(BaseModel):
    """A form the person fills in; ``schema`` is the MCP elicitation subset."""

    model_config = ConfigDict(
        extra="forbid", strict=True, validate_by_name=True, serialize_by_alias=True
    )
    title: str = Field(min_length=1, max_length=100, description="The form's title.")
    message: str = Field(min_length=1, max_length=1000, description="Shown above the inputs.")
    # ``schema`` would shadow BaseModel's own attribute; the wire name stays ``schema``.
    form_schema: dict[str, Any] = Field(
        alias="schema",
        description=(
            "A flat JSON Schema object: string, number, integer, boolean, enum and "
            "multi-select enum properties, as MCP elicitation allows."
        ),
    )

    @field_validator("form_schema")
    @classmethod
    def _in_the_subset(cls, schema: dict[str, Any]) -> dict[str, Any]:
        check_form_schema(schema)
        return schema
