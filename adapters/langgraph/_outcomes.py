"""What a person's answer is to the node that asked: a closed union of frozen values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bot.contract.answers import ApprovalDecision, AskUserAnswers, decision_of
from bot.contract.models import AnsweredBy, QuestionObject


@dataclass(frozen=True)
class HumanAnswered:
    """An ``ask_human`` question answered: each question's text to its answer."""

    question_id: str
    answers: dict[str, str | list[str]]
    answered_by: AnsweredBy | None


@dataclass(frozen=True)
class HumanApproved:
    """The approver approved; ``comment`` is what they wrote, if anything."""

    question_id: str
    comment: str
    answered_by: AnsweredBy | None


@dataclass(frozen=True)
class HumanRejected:
    """The approver rejected: the node must not do what it asked about."""

    question_id: str
    comment: str
    answered_by: AnsweredBy | None


@dataclass(frozen=True)
class Unanswered:
    """Nobody answered: the question expired or was cancelled, never a person's refusal."""

    question_id: str
    status: Literal["expired", "cancelled"]
    reason: str


ApprovalResult = HumanApproved | HumanRejected | Unanswered
AskHumanResult = HumanAnswered | Unanswered


def ask_human_result_of(question: QuestionObject) -> AskHumanResult:
    """An ``ask_user`` question, closed, as the node sees it."""
    if question.status == "answered":
        answer = question.typed_answer
        answers: dict[str, Any] = dict(answer.answers) if isinstance(answer, AskUserAnswers) else {}
        return HumanAnswered(question.id, answers, question.answered_by)
    return _unanswered(question)


def approval_result_of(question: QuestionObject) -> ApprovalResult:
    """An approval, closed, as the node sees it."""
    if question.status == "answered":
        answer = question.typed_answer
        comment = answer.comment if isinstance(answer, ApprovalDecision) else ""
        if decision_of(answer) == "approve":
            return HumanApproved(question.id, comment, question.answered_by)
        return HumanRejected(question.id, comment, question.answered_by)
    return _unanswered(question)


def _unanswered(question: QuestionObject) -> Unanswered:
    if question.status == "expired":
        return Unanswered(question.id, "expired", "Nobody answered before the question expired.")
    if question.status == "cancelled":
        return Unanswered(
            question.id, "cancelled", question.cancel_reason or "The question was cancelled."
        )
    raise ValueError(f"question {question.id} is still open; only a closed question resumes")
