"""How large a modal's submission can come back, and every modal we open kept within what the
Slack door reads.

Slack sends a ``view_submission`` form-encoded (``payload=<JSON>``) with the
whole view in it, as it was opened, then ``state.values``: what was typed
and chosen. Its JSON writes every non-ASCII character as ``\\uXXXX`` (an
astral one as two) and ``/`` as ``\\/``, and form encoding turns each
backslash and each quote, colon, comma and brace into three bytes. So one
typed character can cost 16 bytes (an emoji: ``%5Cud83d%5Cude00``), and a
modal of fifty inputs, harmless to open, comes back far larger than the
app's body limit.

``submission_bytes`` is the most a submission of a view can take, every
input filled to its limit with the costliest characters; the door accepts
``INTERACTION_BYTES`` (``_bridge``), and ``within_reach`` shortens the text
inputs of a view that could pass it, evenly, so every modal we open can be
sent back. The largest form the agents API accepts stays well inside it
(``docs/api.md`` gives the figures); only an approval's edit modal with
many long arguments is ever shortened.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Mapping
from typing import Any

from adapters.slack._limits import TEXT_INPUT_MAX

INTERACTION_BYTES = 4 * 1024 * 1024
"""The largest interactive request the Slack door reads (its signature is checked after)."""

ENVELOPE_BYTES = 4_096
"""A submission's fields besides the view: who, which team and app, trigger, response URLs."""

ECHO_BYTES_PER_BLOCK = 256
"""What Slack adds to each block of a view it echoes (``dispatch_action``, defaults filled)."""

WORST_CHAR_BYTES = 16
"""One typed character at its costliest once escaped and form-encoded (an astral one)."""

_SMALL_VALUE_BYTES = 256  # a number, a date, a time: a few characters and their keys
_TEXT_INPUTS = ("plain_text_input", "email_text_input", "url_text_input")
_ONE_CHOICE = ("static_select", "radio_buttons")
_CHOICES = ("multi_static_select", "checkboxes")


def submission_bytes(view: Mapping[str, Any]) -> int:
    """The most bytes a ``view_submission`` of ``view`` can take as Slack sends it."""
    blocks = [b for b in view.get("blocks") or [] if isinstance(b, Mapping)]
    echoed = encoded_bytes(view) + ECHO_BYTES_PER_BLOCK * len(blocks)
    state = sum(_most_state(b) for b in blocks if b.get("type") == "input")
    return ENVELOPE_BYTES + echoed + state


def within_reach(view: dict[str, Any], *, limit: int = INTERACTION_BYTES) -> dict[str, Any]:
    """``view``, its text inputs shortened evenly (never below what they hold) until a full
    submission of it fits ``limit``."""
    while (excess := submission_bytes(view) - limit) > 0:
        inputs = [e for e in _elements(view) if _shortenable(e)]
        if not inputs:
            break
        cut = math.ceil(excess / (len(inputs) * WORST_CHAR_BYTES))
        for element in inputs:
            element["max_length"] = max(_text_max(element) - cut, _least(element))
    return view


def encoded_bytes(value: Any) -> int:
    """``value``'s JSON as Slack writes it (non-ASCII escaped, ``/`` as ``\\/``), form-encoded."""
    # Spaced as json.dumps spaces by default: never less than Slack's compact JSON.
    text = json.dumps(value, ensure_ascii=True)
    return len(urllib.parse.quote_plus(text)) + 3 * text.count("/")


def _most_state(block: Mapping[str, Any]) -> int:
    element = block.get("element")
    if not isinstance(element, Mapping):
        return 0
    kind = element.get("type")
    keys = encoded_bytes({str(block.get("block_id", "")): {str(element.get("action_id", "")): {}}})
    options = [o for o in element.get("options") or [] if isinstance(o, Mapping)]
    if kind in _TEXT_INPUTS:
        return keys + _SMALL_VALUE_BYTES + _text_max(element) * WORST_CHAR_BYTES
    if kind in _ONE_CHOICE:
        return keys + _SMALL_VALUE_BYTES + max(map(encoded_bytes, options), default=0)
    if kind in _CHOICES:
        return keys + _SMALL_VALUE_BYTES + sum(map(encoded_bytes, options))
    return keys + _SMALL_VALUE_BYTES


def _elements(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks = view.get("blocks") or []
    return [b["element"] for b in blocks if isinstance(b.get("element"), dict)]


def _shortenable(element: Mapping[str, Any]) -> bool:
    # Only a plain text input takes a ``max_length``; an email or URL input has none to set.
    return element.get("type") == "plain_text_input" and _text_max(element) > _least(element)


def _text_max(element: Mapping[str, Any]) -> int:
    # An email or URL input has no max_length: taken to hold what Slack's longest input does.
    most = element.get("max_length")
    return most if isinstance(most, int) else TEXT_INPUT_MAX


def _least(element: Mapping[str, Any]) -> int:
    """What an input must still take: its prefilled text and its least length, at least one."""
    initial = element.get("initial_value")
    least = element.get("min_length")
    return max(
        len(initial) if isinstance(initial, str) else 0,
        least if isinstance(least, int) else 0,
        1,
    )
