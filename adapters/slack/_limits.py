"""Block Kit's limits, and the one way we cut content to fit them.

Numbers are Slack's documented maxima (Block Kit reference: blocks, block
elements, composition objects, views). ``MESSAGE_BYTES`` and
``MESSAGE_TEXT`` are our own budgets: Slack documents no size for a whole
message's blocks, yet refuses one with ``msg_blocks_too_long`` once the
text of all its blocks passes roughly 11,000-13,000 characters (reported
in slackapi/bolt-js issues 2509 and 2867), so we stay well under that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MESSAGE_BLOCKS = 50
MODAL_BLOCKS = 100
MESSAGE_BYTES = 12_000  # the blocks' JSON, ASCII-escaped
MESSAGE_TEXT = 8_000  # every text object's characters, summed
FALLBACK_TEXT = 3_000  # the notification text beside the blocks

SECTION_TEXT = 3_000
SECTION_FIELDS = 10
SECTION_FIELD_TEXT = 2_000
HEADER_TEXT = 150
CONTEXT_ELEMENTS = 10
CONTEXT_TEXT = 3_000
ACTIONS_ELEMENTS = 25
BLOCK_ID = 255
ACTION_ID = 255

BUTTON_TEXT = 75
BUTTON_VALUE = 2_000
CONFIRM_TITLE = 100
CONFIRM_TEXT = 300
CONFIRM_BUTTON = 30

OPTION_TEXT = 75
OPTION_VALUE = 150
OPTION_DESCRIPTION = 75
SELECT_OPTIONS = 100
CHOICE_OPTIONS = 10  # radio_buttons and checkboxes
PLACEHOLDER = 150

INPUT_LABEL = 2_000
INPUT_HINT = 2_000
TEXT_INPUT_MAX = 3_000

MODAL_TITLE = 24
MODAL_BUTTON = 24
PRIVATE_METADATA = 3_000
CALLBACK_ID = 255

CUT = "… (cut)"


def clip(text: str, limit: int) -> str:
    """``text`` if it fits, else its start and a visible marker, ``limit`` in all.

    Texts are clipped once shown (``bot.display``), so the limit holds for what
    Slack receives; the cut then backs off rather than leave half an entity
    (``&am``) or half a shown control (``⟨U+20``) before the marker.
    """
    if len(text) <= limit:
        return text
    if limit <= len(CUT):
        return text[:limit]
    head = text[: limit - len(CUT)]
    entity = head.rfind("&", -(len("&amp;") - 1))
    if entity != -1 and ";" not in head[entity:]:
        head = head[:entity]
    marker = head.rfind("⟨", -(len("⟨U+10FFFF⟩") - 1))
    if marker != -1 and "⟩" not in head[marker:]:
        head = head[:marker]
    return head + CUT


def fit(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``blocks`` within a message's budgets: at most ``MESSAGE_BLOCKS``, then the longest
    section text halved (with the marker) until the bytes and the characters fit."""
    blocks = blocks[:MESSAGE_BLOCKS]
    while _size(blocks) > MESSAGE_BYTES or text_length(blocks) > MESSAGE_TEXT:
        texts = [b["text"] for b in blocks if b["type"] == "section" and "text" in b]
        texts += [f for b in blocks if b["type"] == "section" for f in b.get("fields", [])]
        longest = max(texts, key=lambda t: len(t["text"]), default=None)
        if longest is None or len(longest["text"]) <= 2 * len(CUT):
            break
        longest["text"] = clip(longest["text"], len(longest["text"]) // 2)
    return blocks


def text_length(node: Any) -> int:
    """Characters of every text object in ``node``, however deep (what Slack sums)."""
    if isinstance(node, Mapping):
        own = len(node["text"]) if node.get("type") in ("mrkdwn", "plain_text") else 0
        return own + sum(text_length(v) for k, v in node.items() if k != "text" or not own)
    if isinstance(node, list):
        return sum(text_length(item) for item in node)
    return 0


def _size(blocks: list[dict[str, Any]]) -> int:
    # ASCII-escaped: never smaller than the UTF-8 bytes Slack receives.
    return len(json.dumps(blocks))
