"""Teams admin commands: which messages are commands, and cards that fit Teams."""

from __future__ import annotations

from typing import Any

from adapters.teams._admin import admin_card, admin_words
from adapters.teams._card_kit import MAX_CARD_BYTES, size
from bot.admin import results
from tests.support import pending_item


def activity(text: str, *, kind: str = "personal", value: Any = None) -> dict[str, Any]:
    return {
        "type": "message",
        "text": text,
        "value": value,
        "conversation": {"id": "a:1", "conversationType": kind},
    }


def test_only_personal_chat_messages_that_start_with_a_command_are_admin_commands() -> None:
    """``pending``, ``hitl …``, ``/hitl`` are; a run request, a channel, a submit are not."""
    assert admin_words(activity("pending channel=C1")) == ["pending", "channel=C1"]
    assert admin_words(activity("hitl cancel q1 wrong env")) == ["cancel", "q1", "wrong", "env"]
    assert admin_words(activity("/hitl")) == ["help"]
    assert admin_words(activity("deploy web")) is None
    assert admin_words(activity("pending", kind="channel")) is None
    assert admin_words(activity("pending", value={"hitl": 1})) is None


def test_a_full_page_of_long_questions_fits_a_teams_card_and_keeps_its_place() -> None:
    """A page longer than a card shows what fits and the cursor after the last shown."""
    items = tuple(
        pending_item(
            n,
            scope="tenant/a:1",
            name="ask_user",
            payload={"questions": [{"question": "y" * 5000}]},
            requester="teams:tenant:aad",
            may_answer=("teams:tenant:aad", "admins"),
            message_ref={"conversation_id": "a:1", "activity_id": f"act-{n}"},
        )
        for n in range(100)
    )
    content = admin_card(results.PendingPage(at=2000.0, items=items, next_after="100"))
    assert size(content) <= MAX_CARD_BYTES
    shown = [b for b in content["body"] if b.get("type") == "Container"]
    assert 0 < len(shown) < 100
    assert content["body"][-1]["text"] == f"More: `pending after={len(shown)}`"
