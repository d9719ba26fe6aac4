"""aiohttp's "Error handling request" for a request that is not HTTP: one WARNING line.

aiohttp's parser refuses a bare CR in a header, a header past its size
limit or Content-Length beside Transfer-Encoding with a 400 of its own,
and logs each at ERROR with a traceback, as if our server had failed.
The client sent something that is not HTTP; the record says so in one
line, without the bytes it sent (which may carry anything, tokens too).
"""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import HttpProcessingError

SERVER_LOGGER = "aiohttp.server"


class MalformedRequests(logging.Filter):
    """Turns aiohttp's record of a refused malformed request into one WARNING line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError) and 400 <= (error.code or 0) < 500:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.msg = "refused a malformed HTTP request with %d (%s)"
            record.args = (error.code, type(error).__name__)
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def quiet_malformed_requests() -> None:
    """Install the filter on aiohttp's server logger, once."""
    logger = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(f, MalformedRequests) for f in logger.filters):
        logger.addFilter(MalformedRequests())
