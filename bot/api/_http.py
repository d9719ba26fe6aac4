"""``/v1``: the agents API over HTTP; every refusal is the error envelope, never a 5xx.

Handlers parse and authenticate, then ``ApiQuestions`` acts. Bodies are
validated with the wire models (``bot.contract.models``), the same ones the
OpenAPI document is generated from.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bot import tracing
from bot.api._errors import (
    BAD_LIMIT,
    BAD_PARAMETER,
    BAD_STATUS,
    BAD_WAIT,
    NO_KEY,
    NOT_JSON,
    RATE_LIMITED,
    STORE_BUSY,
    TOO_LARGE,
    UNKEPT_NUMBER,
    UNSTORABLE,
    WRONG_KEY,
    ApiRefusal,
)
from bot.api._keys import DEFAULT_CREATES_PER_MINUTE, KeyRing
from bot.api._objects import STATUS_OF_NAME
from bot.api._openapi import openapi_document
from bot.api._questions import MAX_WAIT_SECONDS, ApiQuestions
from bot.api._waiters import Waiters
from bot.contract.json_values import first_unkept_number
from bot.contract.models import CREATE_QUESTION, CancelRequest, validation_sentence
from bot.questions.records import ApiKey
from bot.serving import JsonRejected, RateLimits, loads_limited
from bot.stores.errors import is_outage
from bot.stores.storable import Unstorable, first_unstorable

log = logging.getLogger(__name__)

API_QUESTIONS = web.AppKey("api_questions", ApiQuestions)
API_KEYS = web.AppKey("api_keys", KeyRing)
API_WAITERS = web.AppKey("api_waiters", Waiters)
# Creates counted per key, in this process; and the number a key may make a minute
# when it names none of its own.
API_CREATES = web.AppKey("api_creates", RateLimits)
API_CREATES_PER_MINUTE = web.AppKey("api_creates_per_minute", int)
PREFIX = "/v1"
Handler = Callable[[web.Request, ApiKey], Awaitable[web.Response]]


def envelope(error: ApiRefusal) -> web.Response:
    response = _not_stored(web.json_response(error.body(), status=error.status))
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def _not_stored(response: web.Response) -> web.Response:
    """``response`` kept by no cache: each answer is one key's, and a 201 carries the links."""
    response.headers["Cache-Control"] = "no-store"
    return response


def _authenticated(handler: Handler) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        try:
            key = await _key(request)
            # A parameter's name reaches no store: ``_only`` refuses a name it does not know.
            for name, value in [*request.query.items(), *request.match_info.items()]:
                _storable({name: value})
            return _not_stored(await handler(request, key))
        except ApiRefusal as error:
            return envelope(error)
        except Exception as error:
            if not is_outage(error):
                raise  # a bug: the app's last resort logs it with its trace
            log.warning("store unavailable for %s (%s)", request.path, type(error).__name__)
            return envelope(ApiRefusal("unavailable", STORE_BUSY))

    return handle


async def _key(request: web.Request) -> ApiKey:
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        raise ApiRefusal("unauthorized", NO_KEY)
    key = await request.app[API_KEYS].holder(presented.strip())
    if key is None:
        raise ApiRefusal("unauthorized", WRONG_KEY)
    return key


async def _json_object(request: web.Request, *, optional: bool = False) -> tuple[bytes, Any]:
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise ApiRefusal(
            "payload_too_large", TOO_LARGE.format(limit=request.app._client_max_size)
        ) from None
    if optional and not raw.strip():
        return b"{}", {}
    try:
        body = loads_limited(raw)
    except JsonRejected:
        raise ApiRefusal("invalid_request", NOT_JSON) from None
    if not isinstance(body, dict):
        raise ApiRefusal("invalid_request", NOT_JSON)
    _storable(body)
    # Before the wire models read it: the parsers take NaN, Infinity and integers of any
    # length, which no store gives back as sent.
    unkept = first_unkept_number(body)
    if unkept is not None:
        raise ApiRefusal("invalid_request", UNKEPT_NUMBER.format(field=unkept or "body"))
    return raw, body


def _storable(value: Any) -> None:
    # Before any store reads or writes it, so every backend answers alike.
    found: Unstorable | None = first_unstorable(value)
    if found is not None:
        sentence = UNSTORABLE.format(field=found.field, code=found.code_point)
        raise ApiRefusal("invalid_request", sentence)


def _only(request: web.Request, *names: str) -> None:
    for name in request.query:
        if name not in names:
            raise ApiRefusal("invalid_request", BAD_PARAMETER.format(name=name))


def _whole(text: str, low: int, high: int, sentence: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 4:
        raise ApiRefusal("invalid_request", sentence)
    value = int(text)
    if not low <= value <= high:
        raise ApiRefusal("invalid_request", sentence)
    return value


def _count_create(request: web.Request, key: ApiKey) -> None:
    """Count this create against ``key``'s limit, or refuse it (429) counting nothing.

    Every create counts, a replay or a refused body too: the limit bounds the
    work one key can make, whatever it sends. A key is counted by its id,
    which no other key shares and a new key of the same name does not inherit.
    """
    limit = key.creates_per_minute or request.app[API_CREATES_PER_MINUTE]
    wait = request.app[API_CREATES].hit(key.key_id, per_minute=limit)
    if wait:
        sentence = RATE_LIMITED.format(limit=limit, seconds=wait)
        raise ApiRefusal("rate_limited", sentence, retry_after=wait)


async def create_question(request: web.Request, key: ApiKey) -> web.Response:
    _count_create(request, key)
    raw, body = await _json_object(request)
    try:
        asked = CREATE_QUESTION.validate_json(raw)
    except ValidationError as invalid:
        raise ApiRefusal("invalid_request", validation_sentence(invalid)) from None
    # An agent's traceparent: the question's trace continues the agent's (bot.tracing).
    with tracing.incoming(request.headers):
        created = await request.app[API_QUESTIONS].create(key, asked, body)
    question = created.question
    if not created.created:
        return web.json_response(question, status=200)
    headers = {"Location": f"{PREFIX}/questions/{question['id']}"}
    return web.json_response(question, status=201, headers=headers)


async def get_question(request: web.Request, key: ApiKey) -> web.Response:
    _only(request, "wait")
    wait = _whole(request.query.get("wait", "0"), 0, MAX_WAIT_SECONDS, BAD_WAIT)
    question = await request.app[API_QUESTIONS].get(key, request.match_info["id"], wait=wait)
    return web.json_response(question)


async def list_questions(request: web.Request, key: ApiKey) -> web.Response:
    _only(request, "status", "run_ref", "limit", "cursor")
    query = request.query
    status = None
    if "status" in query:
        if query["status"] not in STATUS_OF_NAME:
            raise ApiRefusal("invalid_request", BAD_STATUS)
        status = STATUS_OF_NAME[query["status"]]
    limit = _whole(query.get("limit", "50"), 1, 100, BAD_LIMIT)
    page = await request.app[API_QUESTIONS].page(
        key,
        status=status,
        run_ref=query.get("run_ref"),
        limit=limit,
        cursor=query.get("cursor"),
    )
    return web.json_response(page)


async def cancel_question(request: web.Request, key: ApiKey) -> web.Response:
    raw, _ = await _json_object(request, optional=True)
    try:
        cancel = CancelRequest.model_validate_json(raw)
    except ValidationError as invalid:
        raise ApiRefusal("invalid_request", validation_sentence(invalid)) from None
    question = await request.app[API_QUESTIONS].cancel(key, request.match_info["id"], cancel.reason)
    return web.json_response(question)


async def openapi(request: web.Request) -> web.Response:
    del request
    return web.json_response(openapi_document())


def mount_api(
    app: web.Application, *, creates_per_minute: int = DEFAULT_CREATES_PER_MINUTE
) -> None:
    """Add ``/v1``; ``API_QUESTIONS`` and ``API_KEYS`` are set once the service runs.

    ``creates_per_minute`` is for the keys that name no limit of their own.
    """
    app[API_CREATES] = RateLimits("api-creates")
    app[API_CREATES_PER_MINUTE] = creates_per_minute
    router = app.router
    router.add_post(f"{PREFIX}/questions", _authenticated(create_question))
    router.add_get(f"{PREFIX}/questions", _authenticated(list_questions))
    router.add_get(f"{PREFIX}/questions/{{id}}", _authenticated(get_question))
    router.add_post(f"{PREFIX}/questions/{{id}}/cancel", _authenticated(cancel_question))
    router.add_get(f"{PREFIX}/openapi.json", openapi)
    app.on_shutdown.append(_answer_waiters_now)


async def _answer_waiters_now(app: web.Application) -> None:
    """Stopping: each long-poll answers with the current object before the server waits out
    its open requests (the client polls again, wherever it is routed)."""
    waiters = app.get(API_WAITERS)
    if waiters is not None:
        waiters.close()
