"""The console's JSON API: translate page requests into RunService calls.

The service is read from the application at request time because the
composition root creates it at startup, after the routes are frozen.
"""

from __future__ import annotations

import re
from typing import Any, assert_never

from aiohttp import web

from adapters.console._http import ConsoleError, read_json, text_field
from adapters.console._surface import SURFACE, ConsoleSurface
from adapters.console._views import conversation_json, conversations_json
from adapters.console._wording import (
    ANSWER_RECORDED,
    BAD_CONVERSATION,
    EMPTY_TEXT,
    MAX_NAME,
    MAX_TEXT,
    SEND_ANSWER,
    SEND_MESSAGE,
    TEXT_TOO_LONG,
)
from bot.messages import refusal_text
from bot.outcomes import (
    AlreadyAnswered,
    AnswerInvalid,
    Cancelled,
    NotAllowedToAnswer,
    Redeemed,
    RedeemOutcome,
    Responder,
    ScopeMismatch,
    StoreUnavailable,
    TokenExpired,
    TokenInvalid,
)
from bot.surfaces import Conversation
from bot.web import RUN_SERVICE

# The console has one operator; the name only labels who answered.
OPERATOR_ID = "console:operator"
DEFAULT_NAME = "operator"
SCOPE = "console"
CONVERSATION_ID = re.compile(r"^[a-z0-9-]{1,40}$")


class ConsoleApi:
    """Handlers for ``/api/...``; each one is a thin call into the service."""

    def __init__(self, surface: ConsoleSurface) -> None:
        self.surface = surface

    async def conversations(self, request: web.Request) -> web.Response:
        summaries = await request.app[RUN_SERVICE].conversations(SURFACE)
        return web.json_response(conversations_json(summaries))

    async def conversation(self, request: web.Request) -> web.Response:
        key = _conversation_id(request)
        views = await request.app[RUN_SERVICE].history(SURFACE, key)
        return web.json_response(conversation_json(key, views))

    async def post_message(self, request: web.Request) -> web.Response:
        key = _conversation_id(request)
        body = await read_json(request, expected=SEND_MESSAGE)
        text = text_field(body, "text", expected=SEND_MESSAGE).strip()
        if not text:
            raise ConsoleError(400, EMPTY_TEXT)
        if len(text) > MAX_TEXT:
            raise ConsoleError(413, TEXT_TOO_LONG)
        where = Conversation(surface=SURFACE, scope=SCOPE, key=key)
        run = await request.app[RUN_SERVICE].start(where, _responder(body, SEND_MESSAGE), text)
        assert run is not None  # no key given, so never a duplicate
        # Other open pages learn of the new run now, not at its first question.
        self.surface.notify(key)
        return web.json_response({"run_id": run.run_id}, status=202)

    async def answer(self, request: web.Request) -> web.Response:
        body = await read_json(request, expected=SEND_ANSWER)
        token = text_field(body, "token", expected=SEND_ANSWER)
        answer = body.get("answer")
        if not token or not isinstance(answer, dict):
            raise ConsoleError(400, SEND_ANSWER)
        who = _responder(body, SEND_ANSWER)
        outcome = await request.app[RUN_SERVICE].redeem(token, answer, responder=who, scope=SCOPE)
        return answer_response(outcome)


def answer_response(outcome: RedeemOutcome) -> web.Response:
    """Redeemed, or the refusal's sentence under the status that fits it."""
    extra: dict[str, Any] = {}
    match outcome:
        case Redeemed():
            return web.json_response({"ok": True, "message": ANSWER_RECORDED})
        case AlreadyAnswered() | Cancelled() | TokenExpired():
            status = 409
        case NotAllowedToAnswer() | ScopeMismatch() | TokenInvalid():
            status = 403
        case AnswerInvalid(fields=fields):
            status = 422
            extra["fields"] = dict(fields)
        case StoreUnavailable():
            status = 503
        case _:
            assert_never(outcome)
    return web.json_response({"ok": False, "error": refusal_text(outcome), **extra}, status=status)


def _conversation_id(request: web.Request) -> str:
    key = request.match_info["cid"]
    if not CONVERSATION_ID.fullmatch(key):
        raise ConsoleError(400, BAD_CONVERSATION)
    return key


def _responder(body: dict[str, Any], expected: str) -> Responder:
    name = text_field(body, "name", expected=expected).strip()[:MAX_NAME].strip()
    return Responder(id=OPERATOR_ID, name=name or DEFAULT_NAME)
