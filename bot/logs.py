"""Logging: JSON lines off a TTY, and no token or secret ever written out.

The redaction filter is a backstop, not the plan: code logs ids, never
tokens. It rewrites anything shaped like a JWT and any value of a
configured secret before a record is formatted.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

_JWT = re.compile(r"eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*")
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class RedactingFilter(logging.Filter):
    """Replaces tokens and known secrets in the message and its arguments."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if len(s) >= 8]

    def scrub(self, text: str) -> str:
        text = _JWT.sub("[token]", text)
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.scrub(record.getMessage())
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line, with any ``extra=`` fields (run_id, interrupt_id)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "at": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_text:
            entry["error"] = record.exc_text
        return json.dumps(entry, default=str)


def configure_logging(*, level: str, fmt: str, secrets: Iterable[str] = ()) -> None:
    """Install one stderr handler; ``fmt`` auto means JSON unless stderr is a TTY."""
    handler = logging.StreamHandler(sys.stderr)
    as_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    handler.setFormatter(
        JsonFormatter()
        if as_json
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    handler.addFilter(RedactingFilter(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def scrub(text: str) -> str:
    """``text`` with anything token-shaped replaced, for text kept where admins read it."""
    return _JWT.sub("[token]", text)
