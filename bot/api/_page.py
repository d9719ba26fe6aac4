"""``/q/<link token>``: the question page an answer link opens, and the answer it posts.

A GET only reads: it checks the link, reads the question's row and draws
it (``_page_html``), so a mail scanner that opens every link in a message
answers nothing. The answer is a POST from the page's own form, carrying
the per-page value the GET drew (``AnswerLinks.page_value``); it is then
redeemed exactly as a console or Slack answer is (``RunService.redeem``:
who may answer, the quorum, ``requester_may_answer``, the answer's
schema), as the link's answerer and with the resume token re-derived from
the row, so the token itself never leaves the bridge. The page value's
nonce is the answer's idempotency key: the same form sent twice is one
answer (``Replayed``), and a refused one sent again corrected is checked
anew (the key is kept only with a recorded answer).

Every response carries ``Referrer-Policy: no-referrer`` (the link is in
the URL), a Content-Security-Policy that loads nothing and runs nothing
(the page's one stylesheet is allowed by its hash), ``frame-ancestors``
from ``BOT_LINK_FRAME_ANCESTORS`` (none by default), and ``no-store``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import assert_never

from aiohttp import hdrs, web

from bot.api._page_html import (
    CSRF_FIELD,
    LINK_INVALID,
    QUESTION_GONE,
    STYLE_HASH,
    PageFormError,
    PageState,
    message_page,
    question_page,
    read_answer,
)
from bot.api._settings import LinkSettings
from bot.api.links import ANSWER_LINKS, LinkClaims, LinkInvalidError
from bot.contract.identity import console_id, same_person
from bot.questions import quorum
from bot.questions.records import Question, QuestionStatus
from bot.service.answering import outcomes
from bot.service.answering.outcomes import Responder
from bot.service.delivering.messages import SIGN_IN_NEEDED, SIGN_IN_THROTTLED, refusal_text
from bot.service.running.runs import RUN_SERVICE
from bot.serving import ALLOWED_HOSTS, CHALLENGE, SIGN_IN, RateLimits, Throttled, client_of

log = logging.getLogger(__name__)

LINK_ROUTE = "/q/{token}"
PAGE_STALE = (
    "This page was not drawn for this link, or was open too long; reload it and answer again."
)
OTHER_SITE = (
    "Answers are accepted only from the question's own page; open the link and answer there."
)
NOT_THE_ANSWERER = (
    "This link is for {answerer}; sign in to the console as that person to answer through it."
)
YOUR_ANSWER_COUNTED = "Your answer is recorded."
STORE_DOWN = "The bridge could not read this question just now; reload the page in a moment."
TOO_MANY_POSTS = (
    "Too many answers were sent from this address in the last minute; wait {seconds} s, "
    "then send yours again."
)


class LinkPage:
    """The page's two handlers; the links, the run service and sign-in are read from the app."""

    def __init__(self, settings: LinkSettings, *, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings
        self._clock = clock
        self._headers = page_headers(settings)
        self._posts = RateLimits("link-page-posts", clock=clock)

    async def show(self, request: web.Request) -> web.Response:
        opened = await self._open(request)
        if isinstance(opened, web.Response):
            return opened
        claims, record, token = opened
        return await self._draw(request, claims, record, token)

    async def answer(self, request: web.Request) -> web.Response:
        # Counted before anything is read: a caller over the limit costs no store read.
        wait = self._posts.hit(client_of(request), per_minute=self._settings.posts_per_minute)
        if wait:
            response = self._message(429, "Wait a moment", TOO_MANY_POSTS.format(seconds=wait))
            response.headers[hdrs.RETRY_AFTER] = str(wait)
            return response
        opened = await self._open(request)
        if isinstance(opened, web.Response):
            return opened
        claims, record, token = opened
        origin = request.headers.get(hdrs.ORIGIN)
        # A form posted from another site names its Origin; ours, or none, is accepted. Under
        # Referrer-Policy: no-referrer a browser sends our own page's form as "null", so that
        # is accepted too: the per-page value below is what proves the form is ours.
        if origin not in (None, "null") and not request.app[ALLOWED_HOSTS].allows_origin(origin):
            return await self._draw(request, claims, record, token, status=403, error=OTHER_SITE)
        now = self._clock()
        if claims.expired(now, record):
            return await self._draw(request, claims, record, token, status=410)
        form = await request.post()
        fields = {name: [str(v) for v in form.getall(name)] for name in set(form.keys())}
        value = (fields.get(CSRF_FIELD) or [""])[0]
        nonce = request.app[ANSWER_LINKS].page_nonce(value, token, now=now)
        if nonce is None:
            return await self._draw(request, claims, record, token, status=403, error=PAGE_STALE)
        if record.status is not QuestionStatus.OUTSTANDING:
            return await self._draw(request, claims, record, token, status=409)
        try:
            answer = read_answer(record, fields)
        except PageFormError as error:
            return await self._draw(request, claims, record, token, status=400, error=str(error))
        service = request.app[RUN_SERVICE]
        outcome = await service.redeem(
            service.views.token_for(record),
            answer,
            responder=Responder(id=claims.answerer, name=_display_name(claims.answerer)),
            scope=record.scope,
            once_key=f"link-page:{nonce}",
            # A person who corrects a refused answer sends this same form again.
            retryable=True,
        )
        if isinstance(outcome, outcomes.Redeemed | outcomes.Counted | outcomes.Replayed):
            # Post, redirect, get: a reload shows the outcome and sends nothing again.
            raise web.HTTPSeeOther(location=request.path, headers=self._headers)
        status = _status_of(outcome)
        fresh = await service.stores.ledger.get(record.interrupt_id) or record
        field_errors = dict(outcome.fields) if isinstance(outcome, outcomes.AnswerInvalid) else {}
        return await self._draw(
            request,
            claims,
            fresh,
            token,
            status=status,
            error=refusal_text(outcome),
            field_errors=field_errors,
        )

    async def _open(self, request: web.Request) -> tuple[LinkClaims, Question, str] | web.Response:
        """The link's claims and its question's row, or the page that says why not."""
        token = request.match_info["token"]
        try:
            claims = request.app[ANSWER_LINKS].read(token)
        except LinkInvalidError:
            return self._message(404, "This link is not valid", LINK_INVALID)
        service = request.app.get(RUN_SERVICE)
        if service is None:
            return self._message(503, "Starting", STORE_DOWN)
        try:
            record = await service.stores.ledger.get(claims.interrupt_id)
        except Exception as error:  # noqa: BLE001  the store is down: say so, change nothing
            log.warning("question page: store unreachable (%s)", type(error).__name__)
            return self._message(503, "Try again", STORE_DOWN)
        if record is None:
            return self._message(404, "No such question", QUESTION_GONE)
        if self._settings.signin:
            refused = await self._signed_in_as(request, claims.answerer)
            if refused is not None:
                return refused
        return claims, record, token

    async def _signed_in_as(self, request: web.Request, answerer: str) -> web.Response | None:
        """With ``BOT_LINK_SIGNIN``: None when the console sign-in is the link's answerer."""
        authorization = request.headers.get(hdrs.AUTHORIZATION, "")
        try:
            name = await request.app[SIGN_IN].identify(authorization, client=client_of(request))
        except Throttled as throttled:
            response = self._message(
                429, "Sign in", SIGN_IN_THROTTLED.format(seconds=throttled.retry_after)
            )
            response.headers[hdrs.RETRY_AFTER] = str(throttled.retry_after)
            return response
        if name is None:
            response = self._message(401, "Sign in", SIGN_IN_NEEDED)
            response.headers[hdrs.WWW_AUTHENTICATE] = CHALLENGE
            return response
        if not _same_person(name, answerer):
            sentence = NOT_THE_ANSWERER.format(answerer=_display_name(answerer))
            return self._message(403, "Not your link", sentence)
        return None

    async def _draw(
        self,
        request: web.Request,
        claims: LinkClaims,
        record: Question,
        token: str,
        *,
        status: int = 200,
        error: str = "",
        field_errors: dict[str, str] | None = None,
    ) -> web.Response:
        now = self._clock()
        expired = claims.expired(now, record)
        run = await request.app[RUN_SERVICE].known.origin(record.run_id)
        open_to_answer = record.status is QuestionStatus.OUTSTANDING and not expired
        links = request.app[ANSWER_LINKS]
        state = PageState(
            answerer=_display_name(claims.answerer),
            csrf=links.page_value(token, now=now) if open_to_answer else "",
            preselect=claims.preselect,
            notice=YOUR_ANSWER_COUNTED if _voted(record, claims.answerer) else "",
            error=error,
            field_errors=field_errors or {},
            expired=expired,
        )
        if expired and status == 200 and record.status in _GONE:
            status = 410
        return self._html(status, question_page(record, run, state))

    def _message(self, status: int, title: str, sentence: str) -> web.Response:
        return self._html(status, message_page(title, sentence))

    def _html(self, status: int, page: str) -> web.Response:
        return web.Response(
            status=status,
            text=page,
            content_type="text/html",
            charset="utf-8",
            headers=self._headers,
        )


def page_headers(settings: LinkSettings) -> dict[str, str]:
    """What every response of the page carries (see the module docstring)."""
    ancestors = " ".join(settings.ancestors) or "'none'"
    headers = {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src '{STYLE_HASH}'; form-action 'self'; "
            f"base-uri 'none'; frame-ancestors {ancestors}"
        ),
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    }
    if not settings.ancestors:
        headers["X-Frame-Options"] = "DENY"  # for browsers that predate frame-ancestors
    return headers


def mount_link_page(
    app: web.Application, settings: LinkSettings, *, clock: Callable[[], float] = time.time
) -> None:
    """Add ``/q/<link token>`` (GET draws, POST answers); ``app[ANSWER_LINKS]`` must be set.

    ``clock`` is what link expiry and page values are judged by (the service's, in tests).
    """
    page = LinkPage(settings, clock=clock)
    app.router.add_get(LINK_ROUTE, page.show)
    app.router.add_post(LINK_ROUTE, page.answer)


# What an expired link's page answers 410 for: the question ran out, whether or not the
# sweeper has closed its row yet; an answered or cancelled one says how it ended.
_GONE = frozenset({QuestionStatus.OUTSTANDING, QuestionStatus.EXPIRED})


def _status_of(outcome: outcomes.Refusal) -> int:
    match outcome:
        case outcomes.Counted() | outcomes.Replayed():
            return 303  # recorded (now or before): the caller redirects to the page
        case (
            outcomes.AlreadyAnswered()
            | outcomes.AlreadyCancelled()
            | outcomes.TokenExpired()
            | outcomes.AlreadyVoted()
        ):
            return 409
        case (
            outcomes.NotAllowedToAnswer()
            | outcomes.ScopeMismatch()
            | outcomes.TokenInvalid()
            | outcomes.SelfApproval()
        ):
            return 403
        case outcomes.AnswerInvalid():
            return 422
        case outcomes.StoreUnavailable():
            return 503
        case _:
            assert_never(outcome)


def _voted(record: Question, answerer: str) -> bool:
    """Whether the link's answerer has a vote in the question's tally, or closed it."""
    if record.closed_by_id and same_person(record.closed_by_id, answerer):
        return True
    return any(same_person(voter, answerer) for voter in quorum.voters(record))


def _same_person(signed_in: str, answerer: str) -> bool:
    """A console sign-in is the link's answerer: ``console:<name>``, or ``email:<name>``
    for a console user named by their address."""
    if same_person(console_id(signed_in), answerer):
        return True
    return "@" in signed_in and same_person(f"email:{signed_in.lower()}", answerer)


def _display_name(answerer: str) -> str:
    """How the page and the closed question name the link's answerer: ``email:ana@x`` -> ana@x."""
    surface, _, rest = answerer.partition(":")
    return rest if surface in ("email", "console") and rest else answerer
