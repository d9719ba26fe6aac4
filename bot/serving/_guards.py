"""App-wide middlewares: every route (console, Slack, Teams, /healthz, /metrics) passes them.

In order: the host check and tokens in URLs (the request line and
headers), then the body read with its deadline and its limit (the app's, or
a larger one a door allowed its own requests, ``_bodies``), then the JSON
shape of errors under ``/api``.

A body a handler reads as JSON is parsed with ``loads_limited``, which adds
the nesting limit the standard parser lacks: ``json.loads`` recurses per
level, and thousands of levels end in a RecursionError, which would
otherwise surface as a 500 with a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware

from bot.errors import BotError
from bot.service.delivering.messages import (
    BODY_TOO_LARGE,
    BODY_TOO_SLOW,
    NO_SUCH_ROUTE,
    TOKEN_IN_URL,
    WRONG_HOST,
    WRONG_METHOD,
)
from bot.serving._bodies import LARGER_BODIES
from bot.serving._hosts import AllowedHosts

log = logging.getLogger(__name__)

_JWT_SHAPED = re.compile(r"eyJ[\w-]{4,}(?:\.|%2e)[\w-]{4,}(?:\.|%2e)", re.IGNORECASE)
_TOKEN_PARAMS = frozenset({"token", "resume_token", "access_token"})


def refusal(status: int, message: str, **headers: str) -> web.Response:
    """The one shape every refusal here takes: ``{"ok": false, "error": sentence}``."""
    response = web.json_response({"ok": False, "error": message}, status=status)
    response.headers.update(headers)
    response.headers["Cache-Control"] = "no-store"
    return response


# The agents API's envelope (``bot.api``) names a code for each status it may get here.
_API_CODES = {404: "not_found", 413: "payload_too_large"}


def refusal_to(request: web.Request, status: int, message: str, **headers: str) -> web.Response:
    """``refusal``, or under ``/v1`` the agents API's ``{"error": {"code", "message"}}``."""
    if not _is_v1(request):
        return refusal(status, message, **headers)
    code = _API_CODES.get(status, "invalid_request")
    response = web.json_response({"error": {"code": code, "message": message}}, status=status)
    response.headers.update(headers)
    response.headers["Cache-Control"] = "no-store"
    return response


def http_guards(*, allowed: AllowedHosts, body_timeout: float) -> list[Middleware]:
    """The middlewares in the order the application must install them.

    One, not five: each middleware is a coroutine frame on every request,
    and the answer endpoint is the hot path.
    """

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not allowed.allows_host(request.headers.get(hdrs.HOST, "")):
            # 421 Misdirected Request: this server is not the one for that name.
            return refusal_to(request, 421, WRONG_HOST, Connection="close")
        # Refused before any handler (and the access log) sees the query.
        if request.query_string and _carries_token(request):
            return refusal_to(request, 400, TOKEN_IN_URL)
        larger = request.app.get(LARGER_BODIES)
        limit = larger.limit_for(request) if larger is not None else None
        if limit is not None:
            # Only a door's own requests, with the headers it names, read past the app's limit.
            request = request.clone(client_max_size=limit)
        # Most bodies have fully arrived with their headers; only a partial one
        # is read here, once, under the deadline (handlers then get the bytes).
        if request.body_exists and not request.content.is_eof():
            refused = await _read_body(request, body_timeout)
            if refused is not None:
                return refused
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            # A body that had fully arrived with its headers, read past its limit by a handler.
            return refusal_to(request, 413, BODY_TOO_LARGE)
        except web.HTTPNotFound:
            if not _is_api(request) and not _is_v1(request):
                raise
            return refusal_to(request, 404, NO_SUCH_ROUTE)
        except web.HTTPMethodNotAllowed as error:
            if not _is_api(request) and not _is_v1(request):
                raise
            allow = ",".join(sorted(error.allowed_methods))
            return refusal_to(request, 405, WRONG_METHOD, Allow=allow)

    return [guard]


async def _read_body(request: web.Request, deadline: float) -> web.Response | None:
    try:
        async with asyncio.timeout(deadline):
            await request.read()
    except TimeoutError:
        log.debug("request body not sent in time", extra={"path": request.path})
        return refusal_to(request, 408, BODY_TOO_SLOW, Connection="close")
    except web.HTTPRequestEntityTooLarge:
        return refusal_to(request, 413, BODY_TOO_LARGE, Connection="close")
    except ConnectionError:
        # The client went away mid-body: nothing to answer, nothing to alarm anyone.
        log.debug("request abandoned mid-body", extra={"path": request.path})
        return refusal_to(request, 400, BODY_TOO_SLOW, Connection="close")
    return None


def _carries_token(request: web.Request) -> bool:
    """The query string names a token or holds one: the query is what proxies, browsers'
    histories and link rewriters copy around. The path is not looked at: an answer link's
    path is its token by design (``/q/...``, which the access log masks), and a rewriter
    adding ``?utm_source=...`` to it must not make it unusable."""
    if any(key.lower() in _TOKEN_PARAMS for key in request.query):
        return True
    return bool(_JWT_SHAPED.search(request.query_string))


def _is_v1(request: web.Request) -> bool:
    return request.path == "/v1" or request.path.startswith("/v1/")


def _is_api(request: web.Request) -> bool:
    return request.path == "/api" or request.path.startswith("/api/")


DEFAULT_MAX_DEPTH = 32


class JsonRejected(BotError, ValueError):
    """The body is not JSON, or is nested deeper than allowed."""

    def __init__(self, *, too_deep: bool = False) -> None:
        super().__init__("JSON nested too deeply" if too_deep else "not JSON")
        self.too_deep = too_deep


def loads_limited(raw: bytes | str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse ``raw``; JsonRejected if it is not JSON or nests past ``max_depth``."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise JsonRejected(too_deep=True) from None
    except ValueError:
        raise JsonRejected() from None
    # Each level opens a bracket, so a text with few brackets cannot nest deep:
    # the walk below is for the texts that might.
    if _brackets(raw) > max_depth and _depth_exceeds(value, max_depth):
        raise JsonRejected(too_deep=True)
    return value


def _brackets(raw: bytes | str) -> int:
    if isinstance(raw, bytes):
        return raw.count(b"{") + raw.count(b"[")
    return raw.count("{") + raw.count("[")


def _depth_exceeds(value: Any, limit: int) -> bool:
    # Iterative, so checking depth cannot itself recurse too deep.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        # Only containers go on the stack: most values are scalars.
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
