"""Adaptive Card 1.5 building blocks, and keeping a card inside Teams' size limit.

Pure functions returning JSON-ready dicts; no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adapters.teams._activity import ANSWER_VERB, MARKER

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.5"
# Teams refuses messages over about 28 KB, the envelope included: cards
# are kept under this many bytes of JSON so the rest always fits.
MAX_CARD_BYTES = 24_000

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Limits:
    """How many characters a long text and a short label may show."""

    text: int
    label: int


# Tried in order until the card fits; the first fits every ordinary question.
LIMITS = (
    Limits(text=3000, label=200),
    Limits(text=1500, label=120),
    Limits(text=600, label=80),
    Limits(text=250, label=50),
    Limits(text=100, label=30),
)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    marker = f" … [{len(text) - limit:,} more characters not shown]"
    return text[: max(limit - len(marker), 0)].rstrip() + marker


def card(body: list[Json], actions: list[Json] | None = None) -> Json:
    content: Json = {"type": "AdaptiveCard", "$schema": SCHEMA, "version": VERSION, "body": body}
    if actions:
        content["actions"] = actions
    return content


def attachment(content: Json) -> Json:
    return {"contentType": CARD_CONTENT_TYPE, "content": content}


def size(content: Json) -> int:
    return len(json.dumps(content, ensure_ascii=False).encode())


def fit(render: Callable[[Limits], Json]) -> Json:
    """The first rendering, from the most generous limits down, that fits Teams."""
    for limits in LIMITS:
        content = render(limits)
        if size(content) <= MAX_CARD_BYTES:
            return content
    return content


def text(value: str, **style: Any) -> Json:
    return {"type": "TextBlock", "text": value, "wrap": True, **style}


def title(value: str) -> Json:
    return text(value, weight="bolder", size="medium")


def subtle(value: str) -> Json:
    return text(value, isSubtle=True, size="small", spacing="small")


def error_text(value: str) -> Json:
    return text(value, color="attention", size="small", spacing="none")


def facts(pairs: list[tuple[str, str]]) -> Json:
    return {"type": "FactSet", "facts": [{"title": k, "value": v} for k, v in pairs]}


def answer_data(token: str, interrupt_id: str, **fields: str) -> Json:
    """What every answer button carries: our marker, the token, the question's id."""
    return {MARKER: 1, "token": token, "iid": interrupt_id, **fields}


def execute(label: str, data: Json, *, style: str = "") -> Json:
    """``Action.Execute``, falling back to ``Action.Submit`` on clients without it."""
    action: Json = {"type": "Action.Execute", "title": label, "verb": ANSWER_VERB, "data": data}
    fallback: Json = {"type": "Action.Submit", "title": label, "data": data}
    if style:
        action["style"] = style
        fallback["style"] = style
    action["fallback"] = fallback
    return action
