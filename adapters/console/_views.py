"""What the page reads: runs, questions and conversations as plain JSON.

Pure functions with no I/O, like the Slack and Teams renderers; the page
decides how to draw them, these decide what it may know (a token only
while its question can still be answered).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, assert_never

from bot.approval import APPROVAL
from bot.human.capability import ASK_USER
from bot.messages import answered_text, cancelled_text, expired_text
from bot.runs import QuestionView, RunView
from bot.stores.records import ConversationSummary, PauseRecord, PauseStatus


def conversations_json(summaries: Sequence[ConversationSummary]) -> dict[str, Any]:
    return {
        "conversations": [
            {"id": summary.key, "title": summary.title, "updated_at": summary.updated_at}
            for summary in summaries
        ]
    }


def conversation_json(key: str, views: Sequence[RunView]) -> dict[str, Any]:
    return {"id": key, "runs": [run_json(view) for view in views]}


def run_json(view: RunView) -> dict[str, Any]:
    run = view.run
    return {
        "run_id": run.run_id,
        "text": run.text,
        "requester": run.requester,
        "status": run.status.value,
        "final_text": run.final_text,
        "created_at": run.created_at,
        "questions": [question_json(question) for question in view.questions],
    }


def question_json(view: QuestionView) -> dict[str, Any]:
    record = view.record
    outstanding = record.status is PauseStatus.OUTSTANDING
    return {
        "interrupt_id": record.interrupt_id,
        "name": record.name,
        "kind": question_kind(record.name),
        "payload": record.payload,
        "status": record.status.value,
        "closed_by": record.closed_by,
        "closed_at": record.closed_at,
        "expires_at": record.expires_at,
        "answer": record.answer,
        "token": view.token if outstanding and view.token else None,
        "closed_text": closed_text(record),
    }


def question_kind(name: str) -> str:
    """Which form the page draws: the two it knows, or a generic JSON one."""
    return name if name in (ASK_USER, APPROVAL) else "other"


def closed_text(record: PauseRecord) -> str | None:
    at = record.closed_at or 0.0
    match record.status:
        case PauseStatus.OUTSTANDING:
            return None
        case PauseStatus.ANSWERED:
            return answered_text(record.closed_by, at)
        case PauseStatus.EXPIRED:
            return expired_text(at)
        case PauseStatus.CANCELLED:
            return cancelled_text(record.closed_by, at)
        case _:
            assert_never(record.status)
