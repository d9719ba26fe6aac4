"""Adaptive Card 1.5 building blocks, what outside text looks like on them, and keeping a card
inside Teams' size limit.

Pure functions returning JSON-ready dicts; no I/O. Text from an agent, a
model or a request reaches a card through ``md`` (a TextBlock or a FactSet,
which Teams reads as markdown) or ``plain`` (an input's label or
placeholder, a choice's title, a button's title: places that interpret
nothing); both pass ``bot.display`` first and clip after it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adapters.teams._activity import ANSWER_VERB, MARKER
from bot.display import Markup, display

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.5"
# Teams refuses a message of about 28 KB (HTTP 413, MessageSizeTooBig) and
# the renderers stop at 24,000 bytes, so the attachment, measured as the
# bytes the connector sends (JSON with non-ASCII escaped), stays under this.
MAX_CARD_BYTES = 24_000
# Up to this many choices show as radio buttons, and up to the next as a dropdown.
CHOICES_EXPANDED = 5
CHOICES_COMPACT = 15

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Limits:
    """How many characters a long text and a short label may show."""

    text: int
    label: int


# Tried in order until the card fits; the first fits every ordinary question,
# the last every question the API accepts (a test at the payload limits).
LIMITS = (
    Limits(text=3000, label=200),
    Limits(text=1500, label=120),
    Limits(text=600, label=80),
    Limits(text=250, label=50),
    Limits(text=100, label=30),
    Limits(text=60, label=20),
)


def md(value: object, limit: int | None = None) -> str:
    """Outside text for a TextBlock or a FactSet: markdown escaped, hidden controls shown."""
    return _shown(str(value), "teams", limit)


def plain(value: object, limit: int | None = None) -> str:
    """Outside text for a place that reads no markdown: hidden controls shown, nothing escaped."""
    return _shown(str(value), "plain", limit)


def _shown(raw: str, markup: Markup, limit: int | None) -> str:
    """``raw`` displayed, then cut to ``limit``.

    Displaying never shortens a text (a character becomes itself, an escape
    or a marker), so only the first ``limit + 1`` characters can reach the
    card: the rest is not displayed at all, which keeps a 64 KB payload
    cheap to draw, and the marker still counts what the original left out.
    """
    if limit is None:
        return display(raw, markup=markup)
    shown = display(raw[: limit + 1], markup=markup)
    if len(shown) <= limit and len(raw) <= limit:
        return shown
    kept = _kept(shown, limit - len(_marker(len(raw))))
    return kept + _marker(len(raw) - _consumed(raw, kept, markup))


def _consumed(raw: str, kept: str, markup: Markup) -> int:
    """About how many characters of ``raw`` the displayed ``kept`` shows: each character
    costs what it displays as alone, so a mark escaped only at a line's start (``-``, ``#``)
    counts as escaped anywhere and the count of what was left out may come out a little high,
    never low."""
    if display(raw[: len(kept)], markup=markup) == kept:
        return len(kept)
    room = len(kept)
    for index, char in enumerate(raw):
        room -= _width(char, markup)
        if room < 0:
            return index
    return len(raw)


@functools.lru_cache(maxsize=4096)
def _width(char: str, markup: Markup) -> int:
    return len(display(char, markup=markup))


def cut(text: str, limit: int) -> str:
    """``text`` (already displayed, or our own) within ``limit`` characters, with a marker
    saying how much was left out."""
    if len(text) <= limit:
        return text
    kept = _kept(text, limit - len(_marker(len(text))))
    return kept + _marker(len(text) - len(kept))


def _marker(left_out: int) -> str:
    return f" … [{left_out:,} more characters not shown]"


def _kept(text: str, room: int) -> str:
    """The start of ``text`` within ``room``, never ending inside a ``⟨U+202E⟩`` marker or
    halfway through a markdown escape (a lone backslash)."""
    kept = text[: max(room, 0)]
    opened = kept.rfind("⟨U+")
    if opened > kept.rfind("⟩"):
        kept = kept[:opened]
    kept = kept.rstrip()
    if (len(kept) - len(kept.rstrip("\\"))) % 2:
        kept = kept[:-1]
    return kept


def card(body: list[Json], actions: list[Json] | None = None) -> Json:
    content: Json = {"type": "AdaptiveCard", "$schema": SCHEMA, "version": VERSION, "body": body}
    if actions:
        content["actions"] = actions
    return content


def attachment(content: Json) -> Json:
    return {"contentType": CARD_CONTENT_TYPE, "content": content}


def size(content: Json) -> int:
    """The bytes the card's attachment takes in the activity the connector sends."""
    return len(json.dumps(attachment(content)).encode())


def fits(content: Json) -> bool:
    return size(content) <= MAX_CARD_BYTES


def fit(render: Callable[[Limits, int | None], Json], *, items: int = 0) -> Json:
    """The first rendering, from the most generous limits down, that fits Teams.

    ``render(limits, shown)`` draws the card with ``shown`` of its ``items``
    (fields, arguments, facts) or all of them (None). Texts are shortened
    first; only when the shortest still does not fit are items left out,
    as few as may be, and the card says how many.
    """
    shortest = render(LIMITS[-1], None)
    if fits(shortest):
        for limits in LIMITS[:-1]:
            content = render(limits, None)
            if fits(content):
                return content
        return shortest
    low, high = 0, max(items - 1, 0)  # the most items shown that fits, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if fits(render(LIMITS[-1], middle)):
            low = middle
        else:
            high = middle - 1
    return render(LIMITS[-1], low)


def left_out(count: int, what: str, then: str) -> str:
    """What a card says when it had no room for ``count`` of its ``what``."""
    noun, them = (what, "them") if count != 1 else (what.removesuffix("s"), "it")
    return f"{count} more {noun} left out: a Teams card has no room for {them}. {then}".strip()


def text(value: str, **style: Any) -> Json:
    return {"type": "TextBlock", "text": value, "wrap": True, **style}


def title(value: str) -> Json:
    return text(value, weight="bolder", size="medium")


def subtle(value: str) -> Json:
    return text(value, isSubtle=True, size="small", spacing="small")


def error_text(value: str) -> Json:
    return text(value, color="attention", size="small", spacing="none")


def note(value: str) -> Json:
    """What the card left out, and what to do about it."""
    return text(value, color="warning", size="small")


def choice_style(count: int, *, multi: bool) -> str:
    """Radio buttons for a few choices, checkboxes for a multi-select of up to fifteen; a
    dropdown for more; a dropdown the person can type into (Teams' static typeahead) for a
    long single choice."""
    if count <= (CHOICES_COMPACT if multi else CHOICES_EXPANDED):
        return "expanded"
    if multi or count <= CHOICES_COMPACT:
        return "compact"
    return "filtered"


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
