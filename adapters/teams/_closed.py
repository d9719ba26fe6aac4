"""Cards for after: a closed question (answered, expired, cancelled) and a refusal.

A closed card keeps what was asked, drops every action, and says how it
ended in the words ``bot.service.delivering.messages`` uses on every surface.
"""

from __future__ import annotations

from typing import Any, assert_never

from adapters.teams._card_kit import (
    Json,
    Limits,
    card,
    facts,
    fit,
    left_out,
    md,
    note,
    text,
    title,
)
from adapters.teams._form_card import answered_facts, properties
from bot.contract.answers import Answer, AskUserAnswers, FormValues, answer_json
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
)
from bot.questions.quorum import rejected_on_expiry
from bot.questions.records import Question, QuestionStatus
from bot.service.delivering.messages import (
    answered_text,
    approval_line,
    cancelled_text,
    expired_text,
    when,
)

ANSWERS_LEFT_OUT = "The whole answer went to the agent."


def closed_card(record: Question) -> Json:
    """What was asked and how it ended, within Teams' size limit; a long answer's fields are
    left out (the card says how many) before the outcome is."""
    match record.payload:
        case FormToolPayload():
            count = len(properties(record.payload))
        case OtherPayload():
            count = len(_fields_of(record.answer))
        case ApprovalPayload() | AskUserPayload():
            count = 0
        case _:
            assert_never(record.payload)
    return fit(lambda limits, shown: _closed(record, limits, shown), items=count)


def _fields_of(answer: Answer | None) -> dict[str, Any]:
    """A deployment's own interaction's answer, shown field by field as its row holds it:
    no model here knows its fields, so its JSON is all there is to show (a cancel's reason
    among them, as it always was)."""
    return answer_json(answer) or {}


def refusal_card(sentence: str) -> Json:
    """One sentence, shown to the person who acted; the question stays as it was. It may name
    people or quote what they sent, so it is shown as outside text."""
    return card([text(md(sentence, 1000), color="attention", weight="bolder")])


def outcome_line(record: Question) -> str:
    at = record.closed_at or 0.0
    match record.status:
        case QuestionStatus.ANSWERED:
            if record.name == "approval":
                # Shown as the card shows every line: the whole line passes ``md`` later.
                return approval_line(record.answer, record.closed_by, when(at), str)
            return answered_text(record.closed_by, at)
        case QuestionStatus.EXPIRED:
            return expired_text(at, rejected=rejected_on_expiry(record))
        case QuestionStatus.CANCELLED:
            return cancelled_text(record.closed_by, at, record.cancel_reason)
        case QuestionStatus.OUTSTANDING:
            return ""
        case _:
            assert_never(record.status)


def _closed(record: Question, limits: Limits, shown: int | None) -> Json:
    payload = record.payload
    body: list[Json]
    match payload:
        case ApprovalPayload(action=action, summary=summary):
            body = [
                title(f"Approval: {md(action, limits.label)}"),
                text(md(summary, limits.text)),
            ]
        case AskUserPayload(questions=questions):
            body = [title("The agent asked")]
            answer = record.answer
            answers = answer.answers if isinstance(answer, AskUserAnswers) else {}
            for question in questions:
                asked = question.question
                body.append(text(md(asked, limits.text), spacing="small"))
                if asked in answers:
                    body.append(facts([("Answer", _answer(answers[asked], limits))]))
        case FormToolPayload(title=heading, message=message):
            body = [title(md(heading or "Form", limits.label))]
            if message:
                body.append(text(md(message, limits.text)))
            if record.status is QuestionStatus.ANSWERED:
                answered = record.answer
                values = answered.values if isinstance(answered, FormValues) else {}
                body += _some(answered_facts(payload, values, limits), shown)
        case OtherPayload():
            body = [title(md(record.name.replace("_", " ").capitalize(), limits.label))]
            fields = _fields_of(record.answer)
            pairs = [(md(k, limits.label), _answer(v, limits)) for k, v in fields.items()]
            body += _some(pairs, shown)
        case _:
            assert_never(payload)
    color = "good" if record.status is QuestionStatus.ANSWERED else "warning"
    body.append(text(md(outcome_line(record), limits.text), color=color, weight="bolder"))
    return card(body)


def _some(pairs: list[tuple[str, str]], shown: int | None) -> list[Json]:
    kept = pairs if shown is None else pairs[:shown]
    found = [facts(kept)] if kept else []
    if len(kept) < len(pairs):
        found.append(note(left_out(len(pairs) - len(kept), "answers", ANSWERS_LEFT_OUT)))
    return found


def _answer(value: Any, limits: Limits) -> str:
    shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return md(shown, limits.label)
