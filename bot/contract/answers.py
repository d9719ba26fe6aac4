"""How a question ended: the ``answer`` a closed question holds, typed.

Beside the payloads (``bot/contract/payloads.py``) and parsed the same way: once,
by the question's name, where a row becomes a ``Question`` (``answer_of``), and
written back as the very JSON it was read from (``answer_json``), which is also
the ``answer`` of the ``/v1`` question object. This package imports nothing of
the server, so the client reads the same models (``QuestionObject.typed_answer``).

What a close stores, by how it closed:

- answered: the interaction's cleaned response, by the question's name: an
  ``ask_user``'s ``AskUserAnswers``, an ``approval``'s ``ApprovalDecision`` (a
  quorum's names who decided it), a ``form``'s ``FormValues`` (the schema's
  object); a deployment's own interaction's as ``OtherAnswer``;
- expired: nothing, or the rejection a policy that fails closed stores (an
  ``ApprovalDecision``);
- cancelled: nothing, or ``CancelReason``.

A stored value no model takes (a row of an older shape, a retention pass's
emptied ``{}``) is ``OtherAnswer``, kept as the JSON object it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.contract.decisions import Decision

# Like the payloads': nothing unknown, nothing coerced, never changed once made.
_ANSWER = ConfigDict(extra="forbid", strict=True, frozen=True)


class AskUserAnswers(BaseModel):
    """An ``ask_user`` answer: each question's text to its answer (one, or the chosen)."""

    model_config = _ANSWER
    answers: dict[str, str | list[str]]


class ApprovalDecision(BaseModel):
    """An approval's decision, with the approver's comment: ``edit`` carries the edited
    ``arguments`` beside the ``original_arguments``, ``respond`` the ``message`` the model
    reads; a quorum's decision names every approver (``approved_by``) or rejecter
    (``rejected_by``) who decided it. Also what an expiry stores when its policy fails
    closed (a ``reject``)."""

    model_config = _ANSWER
    decision: Decision
    comment: str = ""
    arguments: dict[str, Any] | None = None
    original_arguments: dict[str, Any] | None = None
    message: str | None = None
    approved_by: list[str] | None = None
    rejected_by: list[str] | None = None


@dataclass(frozen=True, slots=True)
class FormValues:
    """A ``form``'s answer: the schema's object, checked against the question's schema
    when it was given (``bot.contract.form_schema.check_form_answer``)."""

    values: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CancelReason:
    """Why a question was cancelled: an admin's or an agent's words, a failed post's
    sentence. A cancel without a reason stores no answer."""

    reason: str


@dataclass(frozen=True, slots=True)
class OtherAnswer:
    """An answer none of the bridge's own kinds fits: a deployment's own interaction's
    response (its model is its own), or a stored value of a shape no model here takes.
    Kept as the JSON object it is."""

    values: Mapping[str, Any]


# What a closed question holds as its answer, one variant per way it ended; match it
# exhaustively. None: no answer (open, or expired or cancelled without one).
Answer = AskUserAnswers | ApprovalDecision | FormValues | CancelReason | OtherAnswer

ANSWERED, EXPIRED, CANCELLED = "answered", "expired", "cancelled"


def answer_of(name: str, status: str, values: Mapping[str, Any] | None) -> Answer | None:
    """The answer of a question called ``name`` that closed as ``status`` (a
    ``QuestionStatus`` or a ``/v1`` status, which spell these alike), parsed once: the
    kind's model when it fits, else ``OtherAnswer``."""
    if values is None:
        return None
    try:
        if status == CANCELLED:
            reason = values.get("reason")
            if isinstance(reason, str) and len(values) == 1:
                return CancelReason(reason)
        elif status == EXPIRED:
            # Whatever the kind: the one answer an expiry stores is a policy's rejection.
            return ApprovalDecision.model_validate(values)
        elif name == "ask_user":
            return AskUserAnswers.model_validate(values)
        elif name == "approval":
            return ApprovalDecision.model_validate(values)
        elif name == "form":
            return FormValues(dict(values))
    except ValidationError:
        pass  # a row written under another shape still reads, as what it holds
    return OtherAnswer(dict(values))


def answer_json(answer: Answer | None) -> dict[str, Any] | None:
    """The answer as its row holds it (and the ``/v1`` object shows it): the fields it was
    given, as they were given, so a row read and written back keeps the very JSON."""
    match answer:
        case None:
            return None
        case AskUserAnswers(answers=answers):
            # Its one field is required and already JSON: the dump, without the serializer.
            return {"answers": dict(answers)}
        case ApprovalDecision():
            return answer.model_dump(mode="json", exclude_unset=True)
        case FormValues(values=values) | OtherAnswer(values=values):
            return dict(values)
        case CancelReason(reason=reason):
            return {"reason": reason}
        case _:
            assert_never(answer)


def decision_of(answer: Answer | None) -> Decision | None:
    """An approval's decision, if ``answer`` is one (an expiry's rejection included)."""
    return answer.decision if isinstance(answer, ApprovalDecision) else None
