"""What an edit of an approval's arguments may be: the arguments its schema does not list
are kept as asked, and JSON fields are read as the bridge keeps JSON."""

from __future__ import annotations

from typing import Any

import pytest

from bot.client.errors import FormAnswerError
from bot.contract.edits import changes, check_edit, diff_text, unlisted

ASKED = {"service": "web", "env": "prod", "command": "deploy --all", "dry_run": True}
LISTED: dict[str, Any] = {
    "action": "deploy",
    "arguments": ASKED,
    "arguments_schema": {
        "type": "object",
        "properties": {"service": {"type": "string"}, "env": {"type": "string"}},
        "required": ["service", "env"],
    },
}


def refused(payload: dict[str, Any], edited: Any) -> dict[str, str]:
    with pytest.raises(FormAnswerError) as caught:
        check_edit(payload, edited)
    return caught.value.fields


def test_arguments_the_schema_does_not_list_are_kept_as_asked() -> None:
    """Left out or sent back unchanged, they reach the agent as asked, in their place."""
    expected = {**ASKED, "env": "staging"}
    left_out = check_edit(LISTED, {"service": "web", "env": "staging"})
    sent_back = check_edit(LISTED, {**ASKED, "env": "staging"})
    assert left_out == sent_back == expected
    assert list(left_out) == list(ASKED)
    assert unlisted(LISTED) == ["command", "dry_run"]


def test_changing_an_argument_the_schema_does_not_list_is_refused_by_name() -> None:
    """Changed (``true`` to ``1`` is a change), or an argument the action never had."""
    fields = refused(LISTED, {**ASKED, "command": "rm -rf /", "dry_run": 1, "extra": 1})
    assert fields == {
        "arguments.command": "is not editable here; it is kept as asked",
        "arguments.dry_run": "is not editable here; it is kept as asked",
        "arguments.extra": "is not an argument of this action",
    }


JSON_FIELDS: dict[str, Any] = {"arguments": {"options": {"limit": 1}, "note": None}}


@pytest.mark.parametrize(
    ("edited", "field", "problem"),
    [
        ({"options": '{"limit": NaN}'}, "options", "holds NaN"),
        ({"options": '{"limit": Infinity}'}, "options", "holds Infinity"),
        ({"options": '{"limit": 1e999}'}, "options", "past a double"),
        ({"options": '{"limit": ' + "9" * 400 + "}"}, "options", "400 digits"),
        ({"options": "[" * 20_000 + "]" * 20_000}, "options", "nests more than 32 levels"),
        ({"options": {"limit": float("nan")}}, "options", "its 'limit' must be a finite"),
        ({"options": {"limit": int("9" * 400)}}, "options", "its 'limit' must be a finite"),
        ({"options": {"limit": 1}, "note": "NaN"}, "note", "holds NaN"),
        ({"options": {"limit": 1}, "note": float("inf")}, "note", "it must be a finite number"),
    ],
)
def test_json_fields_hold_only_what_json_carries(
    edited: dict[str, Any], field: str, problem: str
) -> None:
    """NaN, Infinity, a number past a double or deep nesting, typed as text or sent as JSON:
    the field is named, never a crash and never a null in its place."""
    fields = refused(JSON_FIELDS, {"options": {"limit": 1}, "note": None, **edited})
    assert problem in fields[f"arguments.{field}"], fields


def test_a_field_that_takes_any_value_keeps_text_that_is_not_json() -> None:
    """A null original takes any JSON; text that is not JSON at all stays text."""
    edited = check_edit(JSON_FIELDS, {"options": '{"limit": 2}', "note": "call me"})
    assert edited == {"options": {"limit": 2}, "note": "call me"}


def test_a_change_of_json_type_is_a_change_and_shows_as_one() -> None:
    """``true`` to ``1`` and a trailing space are changes, quoted so a reader sees them."""
    original = {"dry_run": True, "env": "prod", "n": 2}
    edited = {"dry_run": 1, "env": "prod ", "n": 2.0}
    assert [name for name, _, _ in changes(original, edited)] == ["dry_run", "env"]
    assert diff_text(original, edited) == 'dry_run true → 1, env "prod" → "prod "'
