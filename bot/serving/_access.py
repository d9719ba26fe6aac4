"""One access line per request: method, path, status, size, time. No query, no headers.

aiohttp's own access logger writes the first request line and any headers
it is asked for; both can carry a token (``?token=`` or a Referer), so this
one never reads them.
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
        self.logger.info(
            "%s %s %d",
            request.method,
            request.path,
            response.status,
            extra={
                "method": request.method,
                "path": request.path,
                "status": response.status,
                "bytes": response.body_length,
                "ms": round(time * 1000, 1),
            },
        )
