"""Block Kit's limits, and the one way we cut content to fit them.

Numbers are Slack's documented maxima (Block Kit reference: blocks, block
elements, composition objects, views). ``MESSAGE_BYTES`` and
``MESSAGE_TEXT`` are our own budgets: Slack documents no size for a whole
message's blocks, yet refuses one with ``msg_blocks_too_long`` once the
text of all its blocks passes roughly 11,000-13,000 characters (reported
in slackapi/bolt-js issues 2509 and 2867), so we stay well under that.
"""

from __future__ import annotations

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
    """``text`` if it fits, else its start and a visible marker, ``limit`` in all."""
    if len(text) <= limit:
        return text
    if limit <= len(CUT):
        return text[:limit]
    return text[: limit - len(CUT)] + CUT
