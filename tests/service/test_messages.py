"""The sentences every surface shares: a person named in them, by name or by a short id."""

from __future__ import annotations

import pytest

from bot.service.delivering.messages import person_text

GUID = "3f2a9c1e-5a6b-4c8d-9e0f-123456789abc"
TEAMS = f"teams:72f988bf-86f1-41af-91ab-2d7cd011db47:{GUID}"


@pytest.mark.parametrize(
    ("person", "shown"),
    [
        (TEAMS, "Teams user 3f2a9c1e…"),
        ("teams:t:aad-bob", "Teams user aad-bob"),
        ("slack:T0123:U0456", "Slack user U0456"),
        ("console:ana", "ana"),
        ("email:ana@example.com", "ana@example.com"),
        ("link:ops-oncall", "link:ops-oncall"),
        ("group:S0123", "group:S0123"),
    ],
)
def test_a_person_not_seen_is_named_by_a_short_form_of_their_id(person: str, shown: str) -> None:
    """No raw tenant and object GUIDs: a Teams person by the start of their object id."""
    assert person_text(person) == shown


def test_a_person_the_bridge_has_seen_is_named_by_the_name_their_surface_gave() -> None:
    assert person_text(TEAMS, {TEAMS: "Bo Lind"}) == "Bo Lind"
    assert person_text(TEAMS, {"teams:t:other": "Someone"}) == "Teams user 3f2a9c1e…"
