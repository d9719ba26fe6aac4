"""A stored API question as the object ``/v1`` answers with, and the list's cursor.

The token is never part of it: a token travels only inside the chat
message and back.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

from bot.contract.answers import answer_json
from bot.contract.models import ANYONE, QuestionObject
from bot.contract.payloads import payload_json
from bot.questions import posts, quorum
from bot.questions.records import ApiView, QuestionStatus
from bot.stores.storable import unstorable_character
from bot.webhooks import rfc3339

STATUS_NAMES = {
    QuestionStatus.OUTSTANDING: "open",
    QuestionStatus.ANSWERED: "answered",
    QuestionStatus.EXPIRED: "expired",
    QuestionStatus.CANCELLED: "cancelled",
}
STATUS_OF_NAME = {name: status for status, name in STATUS_NAMES.items()}


def _delivery(view: ApiView) -> dict[str, Any]:
    # Posted on one route at least: a question on several is open while one post stands.
    if posts.posted_anywhere(view.question):
        return {"status": "posted", "message": None}
    # An open question on several routes is cancelled once its last post fails: until
    # then another post may still stand.
    waits = bool(view.question.posts) and view.question.status is QuestionStatus.OUTSTANDING
    if view.run.delivery_error and not waits:
        return {"status": "failed", "message": view.run.delivery_error}
    return {"status": "pending", "message": None}


def _route(view: ApiView) -> dict[str, Any]:
    # The route as the agent gave it, kept beside the surface's own reference.
    conversation = view.run.conversation
    route = conversation.get("route")
    if isinstance(route, dict):
        return route
    return {"surface": view.run.surface, "conversation": str(conversation.get("key", ""))}


def _routes(view: ApiView) -> list[dict[str, Any]]:
    routes = view.run.conversation.get("routes")
    return list(routes) if isinstance(routes, list) and routes else [_route(view)]


def question_object(view: ApiView) -> dict[str, Any]:
    """``view`` as the API's question object (a dict that ``QuestionObject`` validates)."""
    question, request = view.question, view.request
    closed = question.status is not QuestionStatus.OUTSTANDING
    # An expiry under a fail-closed policy carries its rejection as the answer.
    answered = (QuestionStatus.ANSWERED, QuestionStatus.EXPIRED)
    answer = answer_json(question.answer) if question.status in answered else None
    answered_by = None
    if question.status is QuestionStatus.ANSWERED:
        answered_by = {"id": question.closed_by_id, "name": question.closed_by}
    return {
        "id": question.interrupt_id,
        "kind": request.kind,
        "status": STATUS_NAMES[question.status],
        "payload": payload_json(question.payload),
        "route": _route(view),
        "routes": _routes(view),
        "answerers": list(question.answerers) or [ANYONE],
        "created_at": rfc3339(question.issued_at),
        "expires_at": rfc3339(question.expires_at),
        "closed_at": rfc3339(question.closed_at) if closed and question.closed_at else None,
        "answer": answer,
        "answered_by": answered_by,
        "cancel_reason": question.cancel_reason or None,
        "delivery": _delivery(view),
        "metadata": request.metadata,
        "run_ref": request.run_ref,
        "idempotency_key": request.idempotency_key,
        "policy": quorum.shown(question),
        "tally": quorum.tally_object(question),
        "level": question.level,
    }


def checked_object(view: ApiView) -> dict[str, Any]:
    """As ``question_object``, through the wire model: what we send is what we document."""
    return QuestionObject.model_validate(question_object(view)).model_dump(mode="json")


def cursor_for(view: ApiView) -> str:
    text = f"{view.request.created_at!r}|{view.request.interrupt_id}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def position_of(cursor: str) -> tuple[float, str]:
    """The (created_at, id) a cursor stands for; ValueError if it is not one of ours.

    Checked as a request's text is before any store sees it: a cursor is
    base64, so the check of the query string cannot see a NUL inside it
    (which PostgreSQL refuses to compare with), and ``cursor_for`` writes only
    a finite time.
    """
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, sep, interrupt_id = text.partition("|")
        created_at = float(at)
        if not sep or not interrupt_id or unstorable_character(interrupt_id) is not None:
            raise ValueError
        if not math.isfinite(created_at):
            raise ValueError
        return created_at, interrupt_id
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("cursor is not one this API gave out") from None
