"""What every console route checks and sets: password, same-site POSTs, headers.

The console shares its aiohttp application with Slack and Teams, so these
checks wrap the console's own handlers rather than run as app middleware.
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import hdrs, web
from yarl import URL

from adapters.console._wording import (
    NOT_JSON,
    OTHER_ORIGIN,
    SIGN_IN,
    TOO_LARGE,
    UNEXPECTED,
)

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


class ConsoleError(Exception):
    """A request the console turns away: its status and one sentence to show."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
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


def guarded(handler: Handler, *, password: str | None, api: bool) -> Handler:
    """Wrap a console handler with the password, POST checks and headers."""

    async def guard(request: web.Request) -> web.StreamResponse:
        try:
            if password is not None and not _authorized(request, password):
                raise ConsoleError(401, SIGN_IN)
            if request.method == hdrs.METH_POST:
                _require_same_site_json(request)
            response = await handler(request)
        except ConsoleError as refused:
            response = error_response(refused.status, refused.message, **refused.extra)
            if refused.status == 401:
                response.headers[hdrs.WWW_AUTHENTICATE] = CHALLENGE
        except web.HTTPException:
            raise
        except Exception:
            log.exception("console request failed", extra={"path": request.path})
            response = error_response(500, UNEXPECTED)
        if not response.prepared:
            secure(response, api=api)
        return response

    return guard


async def read_json(request: web.Request, *, expected: str) -> dict[str, Any]:
    """The body as a JSON object, or a 400 that says what to send instead."""
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise ConsoleError(413, TOO_LARGE) from None
    try:
        body = json.loads(raw)
    except ValueError:
        raise ConsoleError(400, expected) from None
    if not isinstance(body, dict):
        raise ConsoleError(400, expected)
    return body


def text_field(body: Mapping[str, Any], key: str, *, expected: str, default: str = "") -> str:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConsoleError(400, expected)
    return value


def _authorized(request: web.Request, password: str) -> bool:
    given = _basic_password(request.headers.get(hdrs.AUTHORIZATION, ""))
    return given is not None and hmac.compare_digest(given.encode(), password.encode())


def _basic_password(header: str) -> str | None:
    """The password of a Basic ``Authorization`` header; the user name is ignored."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are both ValueErrors
        return None
    _user, colon, given = decoded.partition(":")
    return given if colon else None


def _require_same_site_json(request: web.Request) -> None:
    # A cross-site HTML form cannot send application/json without a CORS
    # preflight, which this app never answers; Origin covers scripted fetches.
    if request.content_type != "application/json":
        raise ConsoleError(403, NOT_JSON)
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is not None and not _same_host(origin, request.host):
        raise ConsoleError(403, OTHER_ORIGIN)


def _same_host(origin: str, host: str) -> bool:
    try:
        seen = URL(origin)
        here = URL(f"{seen.scheme}://{host}") if seen.absolute else None
    except ValueError:
        return False
    if here is None or seen.host is None or here.host is None:
        return False
    return (seen.host.lower(), seen.port) == (here.host.lower(), here.port)
