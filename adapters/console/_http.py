"""What every console route checks and sets: sign-in, same-site JSON POSTs, headers.

The console shares its aiohttp application with Slack and Teams, so these
checks wrap the console's own handlers rather than run as app middleware.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import hdrs, web

from adapters.console._wording import (
    NOT_JSON,
    OTHER_ORIGIN,
    SIGN_IN_THROTTLED,
    TOO_DEEP,
    TOO_LARGE,
    UNEXPECTED,
    UNSTORABLE,
)
from adapters.console._wording import SIGN_IN as SIGN_IN_SENTENCE
from bot.errors import BotError
from bot.serving import (
    ALLOWED_HOSTS,
    DEFAULT_MAX_DEPTH,
    SIGN_IN,
    JsonRejected,
    Throttled,
    client_of,
    loads_limited,
)
from bot.stores.storable import code_point, unstorable_character

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
CHALLENGE = 'Basic realm="console", charset="UTF-8"'
# Request-scoped values the guard sets for the handler.
WHO = web.RequestKey("console_who", str)
DEPTH = web.RequestKey("console_max_json_depth", int)


class ConsoleError(BotError):
    """A request the console turns away: its status and one sentence to show."""

    def __init__(
        self, status: int, message: str, *, retry_after: int | None = None, **extra: Any
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.extra = extra


def error_response(status: int, message: str, **extra: Any) -> web.Response:
    return web.json_response({"ok": False, "error": message, **extra}, status=status)


def secure(response: web.StreamResponse, *, api: bool) -> None:
    """Headers every console response carries; call before it is prepared."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Referrer-Policy"] = "no-referrer"
    # API answers carry tokens; the page itself only needs revalidating.
    response.headers["Cache-Control"] = "no-store" if api else "no-cache"


def guarded(handler: Handler, *, api: bool, max_json_depth: int) -> Handler:
    """Wrap a console handler with sign-in, POST checks and headers.

    Who is asking comes from the app's ``SignIn`` (a person's own
    credentials, or the operator on an open loopback console) and is put on
    the request for the handler; nothing in a request body can name it.
    """

    async def guard(request: web.Request) -> web.StreamResponse:
        try:
            name = await _identify(request)
            if name is None:
                raise ConsoleError(401, SIGN_IN_SENTENCE)
            request[WHO] = name
            request[DEPTH] = max_json_depth
            if request.method == hdrs.METH_POST:
                _require_same_site_json(request)
            response = await handler(request)
        except ConsoleError as refused:
            response = error_response(refused.status, refused.message, **refused.extra)
            if refused.status == 401:
                response.headers[hdrs.WWW_AUTHENTICATE] = CHALLENGE
            if refused.retry_after is not None:
                response.headers[hdrs.RETRY_AFTER] = str(refused.retry_after)
        except web.HTTPException:
            raise
        except Exception:
            log.exception("console request failed", extra={"path": request.path})
            response = error_response(500, UNEXPECTED)
        if not response.prepared:
            secure(response, api=api)
        return response

    return guard


async def _identify(request: web.Request) -> str | None:
    authorization = request.headers.get(hdrs.AUTHORIZATION, "")
    try:
        return await request.app[SIGN_IN].identify(authorization, client=client_of(request))
    except Throttled as throttled:
        wait = throttled.retry_after
        raise ConsoleError(429, SIGN_IN_THROTTLED.format(seconds=wait), retry_after=wait) from None


def signed_in(request: web.Request) -> str:
    """The name ``guarded`` established for this request."""
    return request[WHO]


async def read_json(request: web.Request, *, expected: str) -> dict[str, Any]:
    """The body as a JSON object, or a 400 that says what to send instead."""
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise ConsoleError(413, TOO_LARGE) from None
    try:
        body = loads_limited(raw, max_depth=request.get(DEPTH, DEFAULT_MAX_DEPTH))
    except JsonRejected as rejected:
        raise ConsoleError(400, TOO_DEEP if rejected.too_deep else expected) from None
    if not isinstance(body, dict):
        raise ConsoleError(400, expected)
    return body


def text_field(body: Mapping[str, Any], key: str, *, expected: str, default: str = "") -> str:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConsoleError(400, expected)
    # Before any store: PostgreSQL cannot keep it, and every backend must answer alike.
    character = unstorable_character(value)
    if character is not None:
        raise ConsoleError(400, UNSTORABLE.format(field=key, code=code_point(character)))
    return value


def _require_same_site_json(request: web.Request) -> None:
    # A cross-site HTML form cannot send application/json without a CORS
    # preflight, which this app never answers; Origin covers scripted fetches.
    if request.content_type != "application/json":
        raise ConsoleError(415, NOT_JSON)
    origin = request.headers.get(hdrs.ORIGIN)
    # Checked against the names we serve, never the request's own Host.
    if origin is not None and not request.app[ALLOWED_HOSTS].allows_origin(origin):
        raise ConsoleError(403, OTHER_ORIGIN)
