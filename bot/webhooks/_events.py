"""The event a callback receives when its question closes: the type, when, and the question."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from bot.webhooks._errors import WebhookError

EventType = Literal["question.answered", "question.expired", "question.cancelled"]
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)


def rfc3339(at: float) -> str:
    """``at`` (Unix seconds) as RFC 3339 in UTC, to the millisecond, with a ``Z``."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event_body(kind: EventType, data: Mapping[str, Any], *, at: float) -> bytes:
    """The compact JSON body ``{"type", "timestamp", "data"}``: the bytes that are signed."""
    if kind not in EVENT_TYPES:
        raise WebhookError(f"{kind!r} is not a webhook event; use one of {', '.join(EVENT_TYPES)}")
    event = {"type": kind, "timestamp": rfc3339(at), "data": dict(data)}
    # No NaN or Infinity: receivers parse strict JSON.
    text = json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode()
