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
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from bot.component_settings import ComponentSettings

_JWT = re.compile(r"eyJ[\w-]{4,}(?:\.|%2[eE])[\w-]{4,}(?:\.|%2[eE])[\w-]*")
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class RedactingFilter(logging.Filter):
    """Scrubs every field of a record: message, arguments, extras, traceback, stack.

    Extra fields are scrubbed recursively; values that are not plain data
    are turned into scrubbed strings, since a formatter would str() them.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if len(s) >= 8]

    def scrub(self, text: str) -> str:
        text = _JWT.sub("[token]", text)
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = self.scrub(message)
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrub(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD:
                setattr(record, key, self._clean(value))
        return True

    def _clean(self, value: Any, depth: int = 0) -> Any:
        if isinstance(value, str):
            return self.scrub(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        if depth < 4 and isinstance(value, Mapping):
            return {self.scrub(str(k)): self._clean(v, depth + 1) for k, v in value.items()}
        if depth < 4 and isinstance(value, list | tuple | set | frozenset):
            return [self._clean(item, depth + 1) for item in value]
        return self.scrub(str(value))


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


class LogSettings(ComponentSettings):
    """How much is logged, and in which form (``auto``: JSON unless stderr is a TTY)."""

    format: Literal["auto", "json", "text"] = Field("auto", alias="BOT_LOG_FORMAT")
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", alias="BOT_LOG_LEVEL")


def configure_logging(*, level: str, fmt: str, secrets: Iterable[str] = ()) -> None:
    """Install one stderr handler; ``fmt`` auto means JSON unless stderr is a TTY.

    aiohttp's access logger is replaced by ``bot.serving.AccessLog`` at
    serve time; its "Error handling request" lines drop to the redacting
    handler like every other record.
    """
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
