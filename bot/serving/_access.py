"""One access line per request: method, path, status, size, time. No query, no headers.

aiohttp's own access logger writes the first request line and any headers
it is asked for; both can carry a token (``?token=`` or a Referer), so this
one never reads them. An answer link's path is its token (``/q/<link token>``),
so it is logged as ``/q/[link]``.
"""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger


class AccessLog(AbstractAccessLogger):
    """The access line as structured fields; the path is logged without its query string."""

    @property
    def enabled(self) -> bool:
        # aiohttp skips timing and the call entirely when this is False.
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        path = logged_path(request.path)
        self.logger.info(
            "%s %s %d",
            request.method,
            path,
            response.status,
            extra={
                "method": request.method,
                "path": path,
                "status": response.status,
                "bytes": response.body_length,
                "ms": round(time * 1000, 1),
            },
        )


LINK_PREFIX = "/q/"


def logged_path(path: str) -> str:
    """``path`` as a log may hold it: an answer link's token is a secret, so it is left out."""
    return f"{LINK_PREFIX}[link]" if path.startswith(LINK_PREFIX) else path
