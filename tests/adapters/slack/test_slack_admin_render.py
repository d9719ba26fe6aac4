"""/hitl replies as Block Kit: within Slack's limits whatever the page, and text stays text."""

from __future__ import annotations

import json

from adapters.slack._admin import MAX_SECTION, admin_message, message_link
from bot.admin import results
from tests.support import pending_item

HOSTILE = "<!channel> deploy *now* <https://evil.example|click> " + "x" * 10_000


def page(count: int) -> results.PendingPage:
    items = tuple(
        pending_item(
            n,
            scope="T1:C1",
            name="ask_user",
            payload={"questions": [{"question": HOSTILE}]},
            requester="slack:T1:U1",
            may_answer=("slack:T1:U1", "admins"),
            message_ref={"team": "T1", "channel": "C1", "ts": f"17.{n:06d}"},
        )
        for n in range(count)
    )
    return results.PendingPage(at=2000.0, items=items, next_after=str(count))


def test_a_full_page_of_long_hostile_questions_fits_block_kit_and_keeps_its_place() -> None:
    """At most 50 blocks, sections under 3,000 characters, mentions escaped, cursor continues."""
    message = admin_message(page(100))
    blocks = message["blocks"]
    assert len(blocks) <= 50
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(len(text) <= MAX_SECTION for text in sections)
    assert "<!channel>" not in json.dumps(blocks) and "&lt;!channel&gt;" in sections[0]
    shown = len(sections)
    assert blocks[-1]["elements"][0]["text"] == f"More: `/hitl pending after={shown}`"
    assert message_link({"channel": "C1", "ts": "17.000003"}) in sections[3]


def test_a_refusal_is_one_sentence() -> None:
    """The shared sentence, as text and as the only block."""
    message = admin_message(results.AdminsOnly("pending"))
    assert message["text"].startswith("Only admins can use that command")
    assert len(message["blocks"]) == 1
