"""``approval``: a deployment's own typed interaction, bound under its own tool.

It exists to prove that an interaction the capability knows nothing about
pauses and resumes exactly as ``ask_user`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from bot.contract.decisions import (
    DECISIONS,
    DEFAULT_ALLOW,
    MAX_MESSAGE,
    Decision,
    check_allow,
)
from bot.contract.edits import check_edit
from bot.contract.errors import FormAnswerError
from bot.contract.json_values import same_json

# The payload is defined once, with the client, for every door.
from bot.contract.payloads import ApprovalPayload as ApprovalPayload
from bot.contract.payloads import allowed, payload_of
from bot.human.capability import InteractionRegistration
from bot.human.contribution import refusing_tool_spec
from bot.human.errors import AnswerValidationError
from bot.kernel.tools import Tool, bind_contributed_tool

APPROVAL = "approval"
APPROVAL_REFUSAL = (
    "Approval could not be requested: this run cannot pause, or the call did not fit "
    "(action, summary, arguments, risk of low/medium/high). Do not perform the action."
)


class ApprovalResponse(BaseModel):
    """Approve, reject, edit the arguments (``arguments``) or answer in the tool's place
    (``message``), as the question's ``allow`` lets; an optional comment."""

    model_config = ConfigDict(extra="forbid")
    decision: Decision
    comment: str = Field(default="", max_length=1000)
    arguments: dict[str, Any] | None = None
    message: str | None = Field(default=None, max_length=MAX_MESSAGE)

    @model_validator(mode="after")
    def _fits_the_question(self, info: ValidationInfo) -> Self:
        allows = allowed(asked((info.context or {}).get("payload") or {}))
        if self.decision not in allows:
            raise ValueError(
                f"this question does not allow {self.decision}; it allows {' or '.join(allows)}"
            )
        if self.decision == "edit" and self.arguments is None:
            raise ValueError("an edit carries the edited arguments")
        if self.decision == "respond" and not (self.message or "").strip():
            raise ValueError("a response carries the message the model reads")
        if self.decision != "edit":
            self.arguments = None
        if self.decision != "respond":
            self.message = None
        return self


def asked(payload: Mapping[str, Any] | ApprovalPayload) -> ApprovalPayload:
    """The approval an answer is checked against. The seeds' ``validate_answer`` hands the
    question's payload over as JSON, so it is parsed here; a row of an older shape that no
    longer fits the model keeps what it holds of the model's fields."""
    if isinstance(payload, ApprovalPayload):
        return payload
    parsed = payload_of(APPROVAL, payload)
    if isinstance(parsed, ApprovalPayload):
        return parsed
    known = {k: v for k, v in payload.items() if k in ApprovalPayload.model_fields}
    return ApprovalPayload.model_construct(**{"action": "", "summary": "", **known})


@dataclass(frozen=True, slots=True)
class ApprovalRegistration(InteractionRegistration):
    """``approval``'s registration: the deployment's ``allow`` for questions that name none,
    and each edit checked against its own question's arguments (``bot/contract/edits.py``)."""

    allow: tuple[str, ...] = field(default=DEFAULT_ALLOW)

    def validate_payload(self, payload: Any) -> dict[str, Any]:
        checked = InteractionRegistration.validate_payload(self, payload)
        allow = checked.get("allow") or list(self.allow)
        # Stored only when it says more than the default, so a question asked as before
        # reads as before.
        if tuple(allow) == DEFAULT_ALLOW:
            checked.pop("allow", None)
        else:
            checked["allow"] = allow
        if checked.get("arguments_schema") is None:
            checked.pop("arguments_schema", None)
        return checked

    def validate_answer(self, answer: Any, payload: Mapping[str, Any]) -> dict[str, Any]:
        question = asked(payload)
        if isinstance(answer, Mapping):
            # Named by field before the model's own check, which could name only the answer.
            decision, allows = answer.get("decision"), allowed(question)
            if isinstance(decision, str) and decision in DECISIONS and decision not in allows:
                raise AnswerValidationError(
                    {"decision": f"{decision} is not allowed here; choose {' or '.join(allows)}"}
                )
            if decision == "edit" and not isinstance(answer.get("arguments"), dict):
                raise AnswerValidationError({"arguments": "an edit carries the edited arguments"})
            if decision == "respond" and not str(answer.get("message") or "").strip():
                raise AnswerValidationError({"message": "write what the model should read"})
        clean = InteractionRegistration.validate_answer(self, answer, payload)
        decision = clean["decision"]
        if decision == "edit":
            # The arguments as sent, not as the model dumped them: JSON mode writes a NaN
            # or an Infinity as null, which the edit must refuse rather than pass on.
            try:
                edited = check_edit(question, answer["arguments"])
            except FormAnswerError as wrong:
                raise AnswerValidationError(wrong.fields) from wrong
            original = dict(question.arguments)
            if same_json(edited, original):
                # Nothing changed (as JSON: a true edited to 1 is a change): the original
                # runs, and is recorded as approved.
                return {"decision": "approve", "comment": clean["comment"]}
            return {
                "decision": "edit",
                "comment": clean["comment"],
                "arguments": edited,
                "original_arguments": original,
            }
        if decision == "respond":
            return {"decision": "respond", "comment": clean["comment"], "message": clean["message"]}
        return {"decision": decision, "comment": clean["comment"]}


def approval_registration(
    *, ttl: timedelta | None = None, allow: Sequence[str] = DEFAULT_ALLOW
) -> InteractionRegistration:
    """``approval``; ``allow``: the decisions its questions allow unless they name their own."""
    return ApprovalRegistration(
        name=APPROVAL,
        payload_schema=ApprovalPayload,
        response_schema=ApprovalResponse,
        ttl=ttl,
        allow=tuple(check_allow(list(allow))),
    )


def approval_tool() -> Tool:
    """The deployment's door to ``approval``, with the payload's own schema."""
    spec = refusing_tool_spec(
        APPROVAL,
        (
            "Ask a person to approve an action before you take it. Stop until they "
            "approve or reject; never perform the action on a rejection."
        ),
        refusal=APPROVAL_REFUSAL,
        parameters=("action", "summary", "arguments", "risk"),
    )
    # The model is not offered ``allow``: which decisions a person has is the deployment's.
    schema = ApprovalPayload.model_json_schema()
    schema["properties"].pop("allow", None)
    return bind_contributed_tool(spec, parameters_schema=schema)
