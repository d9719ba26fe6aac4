"""The console's JSON API: translate page requests into RunService calls.

The service is read from the application at request time because the
composition root creates it at startup, after the routes are frozen.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, assert_never

from aiohttp import web

from adapters.console._http import ConsoleError, read_json, signed_in, text_field
from adapters.console._shown import shown
from adapters.console._streams import ConsoleLimits
from adapters.console._surface import SURFACE, ConsoleSurface
from adapters.console._views import (
    asked_by_an_agent,
    conversation_json,
    conversations_json,
    viewer_for,
    waiting_counts,
)
from adapters.console._wording import (
    ANSWER_RECORDED,
    BAD_CONVERSATION,
    EMPTY_TEXT,
    MAX_TEXT,
    SEND_ANSWER,
    SEND_MESSAGE,
    TEXT_TOO_LONG,
    TOO_MANY_ANSWERS,
)
from bot.contract.identity import console_id
from bot.service.answering import outcomes
from bot.service.answering.outcomes import ChatsOff, NotStarted, Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.messages import AGENTS_ONLY, NOT_STARTED, refusal_text
from bot.service.delivering.surfaces import Conversation
from bot.service.running.runs import RUN_SERVICE
from bot.serving import SIGN_IN, RateLimits, client_of

SCOPE = "console"
CONVERSATION_ID = re.compile(r"^[a-z0-9-]{1,40}$")


class ConsoleApi:
    """Handlers for ``/api/...``; each one is a thin call into the service."""

    def __init__(
        self,
        surface: ConsoleSurface,
        *,
        policy: RequesterOrApprovers,
        limits: ConsoleLimits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.surface = surface
        self.policy = policy
        self._answers_per_minute = (limits or ConsoleLimits()).answers_per_minute
        self._answers = RateLimits("console-answers", clock=clock)

    async def conversations(self, request: web.Request) -> web.Response:
        service = request.app[RUN_SERVICE]
        who = _responder(request)
        summaries = await service.conversations(SURFACE)
        waiting = {}
        named = set()
        # One history read per listed conversation (at most 50): RunService has no
        # "open questions by conversation" query yet, and surfaces never read stores.
        for summary in summaries:
            views = await service.history(SURFACE, summary.key)
            counts = waiting_counts(views, await viewer_for(who, self.policy, views))
            if counts[0]:
                waiting[summary.key] = counts
            if asked_by_an_agent(views):
                named.add(summary.key)
        listed = conversations_json(
            summaries,
            waiting,
            you=who.display,
            sign_in=request.app[SIGN_IN].required,
            named=named,
        )
        return web.json_response(listed)

    async def conversation(self, request: web.Request) -> web.Response:
        key = _conversation_id(request)
        views = await request.app[RUN_SERVICE].history(SURFACE, key)
        viewer = await viewer_for(_responder(request), self.policy, views)
        return web.json_response(conversation_json(key, views, viewer))

    async def post_message(self, request: web.Request) -> web.Response:
        key = _conversation_id(request)
        body = await read_json(request, expected=SEND_MESSAGE)
        text = text_field(body, "text", expected=SEND_MESSAGE).strip()
        if not text:
            raise ConsoleError(400, EMPTY_TEXT)
        if len(text) > MAX_TEXT:
            raise ConsoleError(413, TEXT_TOO_LONG)
        where = Conversation(surface=SURFACE, scope=SCOPE, key=key)
        try:
            run = await request.app[RUN_SERVICE].start(where, _responder(request), text)
        except ChatsOff:
            raise ConsoleError(403, AGENTS_ONLY) from None
        except NotStarted:
            raise ConsoleError(503, NOT_STARTED) from None
        assert run is not None  # no key given, so never a duplicate
        # Other open pages learn of the new run now, not at its first question.
        self.surface.notify(key)
        return web.json_response({"run_id": run.run_id}, status=202)

    async def answer(self, request: web.Request) -> web.Response:
        # Counted per address before anything is read: each answer costs a token
        # check and a store transaction, refused or not.
        wait = self._answers.hit(client_of(request), per_minute=self._answers_per_minute)
        if wait:
            raise ConsoleError(429, TOO_MANY_ANSWERS.format(seconds=wait), retry_after=wait)
        body = await read_json(request, expected=SEND_ANSWER)
        token = text_field(body, "token", expected=SEND_ANSWER)
        answer = body.get("answer")
        if not token or not isinstance(answer, dict):
            raise ConsoleError(400, SEND_ANSWER)
        who = _responder(request)
        outcome = await request.app[RUN_SERVICE].redeem(token, answer, responder=who, scope=SCOPE)
        return answer_response(outcome)


def answer_response(outcome: outcomes.RedeemOutcome) -> web.Response:
    """Redeemed, or the refusal's sentence under the status that fits it."""
    extra: dict[str, Any] = {}
    match outcome:
        case outcomes.Redeemed():
            return web.json_response({"ok": True, "message": ANSWER_RECORDED})
        case outcomes.Counted():
            # Counted toward a quorum: recorded, the question stays open.
            return web.json_response({"ok": True, "message": shown(refusal_text(outcome))})
        case (
            outcomes.AlreadyAnswered()
            | outcomes.AlreadyCancelled()
            | outcomes.TokenExpired()
            | outcomes.AlreadyVoted()
            | outcomes.Replayed()
        ):
            status = 409
        case (
            outcomes.NotAllowedToAnswer()
            | outcomes.ScopeMismatch()
            | outcomes.TokenInvalid()
            | outcomes.SelfApproval()
        ):
            status = 403
        case outcomes.AnswerInvalid(fields=fields):
            status = 422
            # Keyed as the page shows each field, so it finds the one to mark.
            extra["fields"] = shown(dict(fields))
        case outcomes.StoreUnavailable():
            status = 503
        case _:
            assert_never(outcome)
    # A refusal names people (who answered first) and fields as they were written.
    error = shown(refusal_text(outcome))
    return web.json_response({"ok": False, "error": error, **extra}, status=status)


def _conversation_id(request: web.Request) -> str:
    key = request.match_info["cid"]
    if not CONVERSATION_ID.fullmatch(key):
        raise ConsoleError(400, BAD_CONVERSATION)
    return key


def _responder(request: web.Request) -> Responder:
    # The signed-in name (or the operator's), never anything the body says.
    name = signed_in(request)
    return Responder(id=console_id(name), name=name)
