"""Cards for after: a closed question (answered, expired, cancelled) and a refusal.

A closed card keeps what was asked, drops every action, and says how it
ended in the words ``bot.service.messages`` uses on every surface.
"""

from __future__ import annotations

from typing import Any, assert_never

from adapters.teams._card_kit import Json, Limits, card, cut, facts, fit, text, title
from adapters.teams._form_card import answered_facts
from bot.service.messages import answered_text, cancelled_text, decided_text, expired_text
from bot.stores.records import Question, QuestionStatus


def closed_card(record: Question) -> Json:
    return fit(lambda limits: _closed(record, limits))


def refusal_card(sentence: str) -> Json:
    """One sentence, shown to the person who acted; the question stays as it was."""
    return card([text(sentence, color="attention", weight="bolder")])


def outcome_line(record: Question) -> str:
    at = record.closed_at or 0.0
    match record.status:
        case QuestionStatus.ANSWERED:
            answer = record.answer or {}
            if record.name == "approval":
                return decided_text(
                    str(answer.get("decision", "")),
                    record.closed_by,
                    at,
                    str(answer.get("comment", "")),
                )
            return answered_text(record.closed_by, at)
        case QuestionStatus.EXPIRED:
            return expired_text(at)
        case QuestionStatus.CANCELLED:
            return cancelled_text(record.closed_by, at, record.cancel_reason)
        case QuestionStatus.OUTSTANDING:
            return ""
        case _:
            assert_never(record.status)


def _closed(record: Question, limits: Limits) -> Json:
    payload = record.payload
    body: list[Json]
    if record.name == "approval":
        body = [
            title(cut(f"Approval: {payload.get('action', '')}", limits.label)),
            text(cut(str(payload.get("summary", "")), limits.text)),
        ]
    elif record.name == "ask_user":
        body = [title("The agent asked")]
        answers = (record.answer or {}).get("answers", {})
        for question in payload.get("questions", []):
            asked = str(question.get("question", ""))
            body.append(text(cut(asked, limits.text), spacing="small"))
            if asked in answers:
                body.append(facts([("Answer", _answer(answers[asked], limits))]))
    elif record.name == "form":
        body = [title(cut(str(payload.get("title") or "Form"), limits.label))]
        if payload.get("message"):
            body.append(text(cut(str(payload["message"]), limits.text)))
        shown = answered_facts(payload, record.answer or {}, limits)
        if shown and record.status is QuestionStatus.ANSWERED:
            body.append(facts(shown))
    else:
        body = [title(cut(record.name.replace("_", " ").capitalize(), limits.label))]
        answer = record.answer or {}
        body.append(facts([(cut(k, limits.label), _answer(v, limits)) for k, v in answer.items()]))
    color = "good" if record.status is QuestionStatus.ANSWERED else "warning"
    body.append(text(cut(outcome_line(record), limits.text), color=color, weight="bolder"))
    return card(body)


def _answer(value: Any, limits: Limits) -> str:
    shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return cut(shown, limits.label)
