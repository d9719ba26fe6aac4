"""A ``form`` in Block Kit: the message, the modal built from its schema, the answer read back."""

from __future__ import annotations

import json
from typing import Any

from adapters.slack._modals import Metadata, answer_from_state, answer_modal, errors_for, form_kind
from adapters.slack._render import closed_message, kind_of
from tests.adapters.slack.test_slack_render import (
    TOKEN,
    asked,
    assert_message_within_limits,
    assert_modal_within_limits,
)
from tests.form_support import PAYLOAD, largest_form
from tests.support import closed_question, typed

META = Metadata(TOKEN, "form", "C1", "1.2", "1.1")


def modal(payload: dict[str, Any] = PAYLOAD) -> dict[str, Any]:
    return answer_modal(typed("form", payload), {}, META)


def test_a_form_posts_its_title_and_an_answer_button() -> None:
    message = asked("form", PAYLOAD)
    assert_message_within_limits(message)
    assert (
        kind_of(typed("form", PAYLOAD), TOKEN) == "modal"
        and form_kind(typed("form", PAYLOAD)) == "form"
    )
    assert message["text"] == "Form: Sign up"
    section = message["blocks"][0]["text"]["text"]
    assert section.startswith("*Sign up*\nTell us who you are.\nFields: Your name, Email, Age")
    (button,) = next(b for b in message["blocks"] if b["type"] == "actions")["elements"]
    assert button["text"]["text"] == "Answer…"


def test_the_modal_has_one_input_per_property_of_the_right_element() -> None:
    """Block Kit's own element for each kind, with bounds and defaults filled in."""
    view = modal()
    assert_modal_within_limits(view)
    assert view["title"]["text"] == "Sign up"
    assert Metadata.parse(view["private_metadata"]) == META
    note, *inputs = view["blocks"]
    assert note["text"] == {"type": "plain_text", "text": "Tell us who you are.", "emoji": True}
    by_id = {b["block_id"]: b for b in inputs}
    assert list(by_id) == [
        "f:name",
        "f:email",
        "f:age",
        "f:agree",
        "f:plan",
        "f:start",
        "f:regions",
    ]
    assert {k: b["optional"] for k, b in by_id.items() if not b["optional"]} == {
        "f:name": False,
        "f:age": False,
        "f:agree": False,
    }
    element = {k: b["element"] for k, b in by_id.items()}
    assert element["f:name"] == {
        "type": "plain_text_input",
        "action_id": "answer",
        "max_length": 80,
        "min_length": 1,
        "multiline": False,
    }
    assert element["f:email"]["type"] == "email_text_input"
    assert element["f:age"] == {
        "type": "number_input",
        "action_id": "answer",
        "is_decimal_allowed": False,
        "min_value": "0",
        "max_value": "150",
    }
    assert element["f:agree"]["type"] == "radio_buttons"
    assert element["f:agree"]["initial_option"]["value"] == "false"
    assert [o["value"] for o in element["f:agree"]["options"]] == ["true", "false"]
    plan = element["f:plan"]
    assert [(o["text"]["text"], o["value"]) for o in plan["options"]] == [
        ("free", "0"),
        ("pro", "1"),
    ]
    assert plan["initial_option"]["value"] == "0"
    assert element["f:start"]["type"] == "datepicker"
    assert element["f:regions"]["type"] == "checkboxes"
    assert by_id["f:name"]["label"]["text"] == "Your name"


def test_long_lists_become_selects_and_date_times_a_picker() -> None:
    many = [f"option {i}" for i in range(30)]
    schema = {
        "type": "object",
        "properties": {
            "one": {"type": "string", "enum": many},
            "some": {"type": "array", "items": {"enum": many}, "maxItems": 3, "default": many[:2]},
            "at": {"type": "string", "format": "date-time", "default": "2026-12-01T16:00:00Z"},
            "link": {"type": "string", "format": "uri"},
            "ratio": {"type": "number", "default": 0.5},
        },
    }
    view = modal({"title": "T" * 40, "message": "", "schema": schema})
    assert_modal_within_limits(view)
    element = {b["block_id"]: b["element"] for b in view["blocks"]}
    assert element["f:one"]["type"] == "static_select" and len(element["f:one"]["options"]) == 30
    some = element["f:some"]
    assert some["type"] == "multi_static_select" and some["max_selected_items"] == 3
    assert [o["value"] for o in some["initial_options"]] == ["0", "1"]
    assert [o["text"]["text"] for o in some["initial_options"]] == many[:2]
    assert element["f:at"] == {
        "type": "datetimepicker",
        "action_id": "answer",
        "initial_date_time": 1_796_140_800,
    }
    assert element["f:link"]["type"] == "url_text_input"
    assert element["f:ratio"]["is_decimal_allowed"] is True
    assert element["f:ratio"]["initial_value"] == "0.5"


def state(**values: dict[str, Any]) -> dict[str, Any]:
    return {f"f:{name}": {"answer": value} for name, value in values.items()}


def test_a_submitted_modal_reads_back_as_the_schemas_object() -> None:
    values = state(
        name={"type": "plain_text_input", "value": "Ada"},
        email={"type": "email_text_input", "value": None},
        age={"type": "number_input", "value": "36"},
        agree={"type": "radio_buttons", "selected_option": {"value": "true"}},
        plan={"type": "radio_buttons", "selected_option": None},
        start={"type": "datepicker", "selected_date": "2026-12-24"},
        regions={"type": "checkboxes", "selected_options": [{"value": "0"}, {"value": "2"}]},
    )
    assert answer_from_state(META, typed("form", PAYLOAD), {}, values) == {
        "name": "Ada",
        "age": 36,
        "agree": True,
        "start": "2026-12-24",
        "regions": ["eu", "apac"],
    }
    odd = state(
        age={"type": "number_input", "value": "thirty"},
        agree={"type": "radio_buttons", "selected_option": {"value": "false"}},
    )
    assert answer_from_state(META, typed("form", PAYLOAD), {}, odd) == {
        "age": "thirty",
        "agree": False,
    }
    forged = state(plan={"type": "static_select", "selected_option": {"value": "7"}})
    assert answer_from_state(META, typed("form", PAYLOAD), {}, forged) == {
        "plan": "7"
    }  # refused later


def test_a_long_or_odd_choice_comes_back_whole() -> None:
    """Options carry indexes, so a 300-character value with commas is not cut to 150."""
    long = "a, b & <c> " * 30
    schema = {"type": "object", "properties": {"pick": {"type": "string", "enum": ["x", long]}}}
    payload = {"title": "Pick", "message": "", "schema": schema}
    view = modal(payload)
    assert_modal_within_limits(view)
    option = view["blocks"][0]["element"]["options"][1]
    assert option["value"] == "1" and len(option["text"]["text"]) <= 75
    values = state(pick={"type": "radio_buttons", "selected_option": {"value": "1"}})
    assert answer_from_state(META, typed("form", payload), {}, values) == {"pick": long}


def test_a_picked_date_time_is_sent_as_rfc3339_utc() -> None:
    schema = {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}
    payload = {"title": "When", "message": "", "schema": schema}
    values = state(at={"type": "datetimepicker", "selected_date_time": 1_796_140_800})
    assert answer_from_state(META, typed("form", payload), {}, values) == {
        "at": "2026-12-01T16:00:00Z"
    }


def test_problems_go_under_their_own_field() -> None:
    fields = {"age": "must be at most 150", "x": "is not a field of this form", "answer": "no"}
    assert errors_for(META, typed("form", PAYLOAD), {}, fields) == {
        "f:age": "must be at most 150",
        "f:name": "is not a field of this form",
    }


def test_the_closed_form_shows_the_submitted_fields_and_who() -> None:
    answer = {"name": "<!channel> Ada", "age": 36, "agree": True, "regions": []}
    message = closed_message(
        closed_question("form", PAYLOAD, "answered", answer, closed_at=1.8e9),
        requester="<@U1>",
        by="<@U2>",
    )
    assert_message_within_limits(message)
    assert not [b for b in message["blocks"] if b["type"] == "actions"]
    fields = next(b for b in message["blocks"] if "fields" in b)["fields"]
    assert [f["text"] for f in fields] == [
        "*Your name*\n&lt;!channel&gt; Ada",
        "*Age*\n36",
        "*Agree to the terms*\nYes",
        "*Regions*\n(none)",
    ]
    assert "Answered by <@U2>" in json.dumps(message)
    expired = closed_message(
        closed_question("form", PAYLOAD, "expired", None, closed_at=1.8e9), requester="<@U1>", by=""
    )
    assert "Expired, no answer." in json.dumps(expired)
    assert not [b for b in expired["blocks"] if "fields" in b]


def test_the_largest_form_fits_every_limit() -> None:
    """Fifty long-titled properties: the message, the modal and the closed message all fit."""
    payload = largest_form()
    assert_message_within_limits(asked("form", payload))
    view = modal(payload)
    assert_modal_within_limits(view)
    assert len(view["blocks"]) == 51
    answer = {name: "v" * 3000 for name in payload["schema"]["properties"]}
    message = closed_message(
        closed_question("form", payload, "answered", answer, closed_at=1.8e9),
        requester="<@U1>",
        by="<@U2>",
    )
    assert_message_within_limits(message)
    fields = next(b for b in message["blocks"] if "fields" in b)["fields"]
    assert len(fields) == 10 and fields[-1]["text"] == "…and 41 more fields"
