"""Rendering is pure and always within Block Kit's limits, asserted limit by limit."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from adapters.slack import _limits as L
from adapters.slack._limits import text_length
from adapters.slack._modals import Metadata, answer_from_state, answer_modal, errors_for
from adapters.slack._render import (
    button_value,
    closed_message,
    kind_of,
    parse_value,
    question_message,
)
from bot.interactions.approval import ApprovalResponse
from bot.questions.quorum import expired_answer
from tests.support import closed_question, open_question, typed

TOKEN = "h." + "p" * 900 + ".s"  # as long as a real token may get (under 1,000)
HUGE = "Why? " * 2_000  # 10,000 characters


def asked(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The message of a question waiting for an answer."""
    return question_message(
        open_question(name, payload, expires_at=1_800_000_000.0),
        token=TOKEN,
        requester="<@U1>",
        audience="Only <@U1> can answer this.",
    )


def huge_payload() -> dict[str, Any]:
    options = [{"label": f"option {i} " + "x" * 200, "description": "d" * 500} for i in range(60)]
    return {"questions": [{"question": HUGE, "header": "H" * 300, "options": options}]}


def texts(node: Any) -> list[tuple[str, str]]:
    """Every (type, text) of every text object, however deep."""
    found = []
    if isinstance(node, dict):
        if node.get("type") in ("mrkdwn", "plain_text") and "text" in node:
            found.append((node["type"], node["text"]))
        for value in node.values():
            found += texts(value)
    elif isinstance(node, list):
        for value in node:
            found += texts(value)
    return found


def assert_message_within_limits(message: dict[str, Any]) -> None:
    blocks = message["blocks"]
    assert len(blocks) <= L.MESSAGE_BLOCKS
    assert len(json.dumps(blocks).encode()) <= L.MESSAGE_BYTES
    assert sum(len(text) for _, text in texts(blocks)) <= L.MESSAGE_TEXT
    assert len(message["text"]) <= L.FALLBACK_TEXT
    for block in blocks:
        assert len(block.get("block_id", "")) <= L.BLOCK_ID
        if block["type"] == "section":
            if "text" in block:
                assert len(block["text"]["text"]) <= L.SECTION_TEXT
            assert len(block.get("fields", [])) <= L.SECTION_FIELDS
            for field in block.get("fields", []):
                assert len(field["text"]) <= L.SECTION_FIELD_TEXT
        if block["type"] == "context":
            assert len(block["elements"]) <= L.CONTEXT_ELEMENTS
            assert all(len(e["text"]) <= L.CONTEXT_TEXT for e in block["elements"])
        if block["type"] == "actions":
            assert len(block["elements"]) <= L.ACTIONS_ELEMENTS
            for button in block["elements"]:
                assert len(button["text"]["text"]) <= L.BUTTON_TEXT
                assert len(button["value"]) <= L.BUTTON_VALUE
                assert len(button["action_id"]) <= L.ACTION_ID
        # slack_sdk's own models check the documented limits independently.
        Block.parse(block).validate_json()  # type: ignore[union-attr]


def assert_modal_within_limits(view: dict[str, Any]) -> None:
    assert len(view["blocks"]) <= L.MODAL_BLOCKS
    assert len(view["title"]["text"]) <= L.MODAL_TITLE
    assert len(view["submit"]["text"]) <= L.MODAL_BUTTON
    assert len(view["private_metadata"]) <= L.PRIVATE_METADATA
    assert len(view["callback_id"]) <= L.CALLBACK_ID
    for block in view["blocks"]:
        if block["type"] == "input":
            assert len(block["label"]["text"]) <= L.INPUT_LABEL
            assert len(block.get("hint", {}).get("text", "")) <= L.INPUT_HINT
            options = block["element"].get("options", [])
            limit = (
                L.CHOICE_OPTIONS
                if block["element"]["type"] in ("radio_buttons", "checkboxes")
                else L.SELECT_OPTIONS
            )
            assert len(options) <= limit
            for option in options:
                assert len(option["text"]["text"]) <= L.OPTION_TEXT
                assert len(option["value"]) <= L.OPTION_VALUE
                assert len(option.get("description", {}).get("text", "")) <= L.OPTION_DESCRIPTION
    View(**view).validate_json()


def test_a_10000_character_question_with_60_options_fits_every_limit() -> None:
    """The message is cut with a visible marker; the modal holds every option that fits."""
    message = asked("ask_user", huge_payload())
    assert_message_within_limits(message)
    assert L.CUT in json.dumps(message, ensure_ascii=False)
    assert kind_of(typed("ask_user", huge_payload()), TOKEN) == "modal"
    view = answer_modal(
        typed("ask_user", huge_payload()), {}, Metadata(TOKEN, "ask", "C1", "1.2", "1.1")
    )
    assert_modal_within_limits(view)
    select = view["blocks"][0]["element"]
    assert select["type"] == "static_select" and len(select["options"]) == 60
    answer = {"answers": {HUGE: "option 1 " + "x" * 200}}
    done = closed_message(
        closed_question("ask_user", huge_payload(), "answered", answer, closed_at=1.8e9),
        requester="<@U1>",
        by="<@U2>",
    )
    assert_message_within_limits(done)
    assert all(o["text"]["text"].endswith(L.CUT) for o in select["options"])


def test_many_questions_and_many_arguments_still_fit() -> None:
    """60 questions in a message, ten-plus arguments in an approval: cut, never refused."""
    many = {"questions": [{"question": f"q{i} " + "y" * 3000} for i in range(60)]}
    message = asked("ask_user", many)
    assert_message_within_limits(message)
    assert "more questions" in json.dumps(message)
    view = answer_modal(
        typed("ask_user", {"questions": many["questions"] * 2}),
        {},
        Metadata(TOKEN, "ask", "C1", "1.2", "1.1"),
    )
    assert_modal_within_limits(view)
    approval = {
        "action": "a" * 500,
        "summary": HUGE,
        "arguments": {f"k{i}": "v" * 3000 for i in range(30)},
        "risk": "high",
    }
    assert_message_within_limits(asked("approval", approval))


def test_buttons_carry_the_token_and_the_choice() -> None:
    """One question, two options: two buttons whose values decode to (token, answer)."""
    payload = {"questions": [{"question": "Where?", "options": [{"label": "eu"}, {"label": "us"}]}]}
    message = asked("ask_user", payload)
    assert_message_within_limits(message)
    actions = next(b for b in message["blocks"] if b["type"] == "actions")
    decoded = [parse_value(b["value"]) for b in actions["elements"]]
    assert decoded == [
        (TOKEN, {"answers": {"Where?": "eu"}}),
        (TOKEN, {"answers": {"Where?": "us"}}),
    ]
    assert "<!date^1800000000^" in json.dumps(message)


def test_text_length_counts_every_text_object_once() -> None:
    blocks = [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "abc"},
            "fields": [{"type": "plain_text", "text": "de"}],
        }
    ]
    assert text_length(blocks) == 5 == sum(len(t) for _, t in texts(blocks))


def test_malformed_values_decode_to_nothing() -> None:
    """A value that is not ours gives an empty token, which redeem refuses."""
    for value in ("", "{", "[]", '{"t": 1}', '{"t": "x", "a": []}', "x" * 3000):
        assert parse_value(value) == ("", {})
    assert parse_value(button_value("tok", {"a": 1})) == ("tok", {"a": 1})


def test_an_approval_has_approve_and_a_confirmed_reject() -> None:
    payload = {"action": "deploy web", "summary": "ship it", "arguments": {}, "risk": "low"}
    message = asked("approval", payload)
    actions = next(b for b in message["blocks"] if b["type"] == "actions")
    approve, reject = actions["elements"]
    assert approve["style"] == "primary" and reject["style"] == "danger"
    assert reject["confirm"]["title"]["text"]
    assert_message_within_limits(message)


def test_closed_messages_say_who_and_have_no_buttons() -> None:
    payload = {"action": "deploy web", "summary": "ship it"}
    for status, answer, expected in [
        ("answered", {"decision": "approve"}, "Approved by <@U2>"),
        ("answered", {"decision": "reject", "comment": "<!channel> no"}, "&lt;!channel&gt; no"),
        ("expired", None, "Expired, no answer."),
        ("cancelled", None, "Cancelled by <@U3>"),
    ]:
        by = "<@U3>" if status == "cancelled" else "<@U2>"
        message = closed_message(
            closed_question("approval", payload, status, answer, closed_at=1.8e9),
            requester="<@U1>",
            by=by,
        )
        assert expected in json.dumps(message)
        assert not [b for b in message["blocks"] if b["type"] == "actions"]
        assert_message_within_limits(message)


def test_an_expiry_that_rejects_by_policy_says_it_was_rejected() -> None:
    """``on_expire: "reject"`` stores a rejection: the closed message says so, not "no answer"."""
    payload = {"action": "deploy web", "summary": "ship it"}
    rejection = expired_answer(
        closed_question("approval", payload, "expired", policy={"on_expire": "reject"})
    )
    message = closed_message(
        closed_question("approval", payload, "expired", rejection, closed_at=1.8e9),
        requester="<@U1>",
        by="",
    )
    assert message["blocks"][-1]["elements"][0]["text"] == (
        "Expired without an answer: rejected, as its policy says."
    )
    assert_message_within_limits(message)


def test_a_cancel_shows_its_reason_as_text() -> None:
    """The reason an admin gave is on the message, escaped: it cannot mention or link."""
    answer = {"reason": "wrong service <!channel>"}
    message = closed_message(
        closed_question("approval", {}, "cancelled", answer, closed_at=1.8e9),
        requester="<@U1>",
        by="<@U3>",
    )
    assert "Reason: wrong service &lt;!channel&gt;" in json.dumps(message)
    assert "<!channel>" not in json.dumps(message)
    assert_message_within_limits(message)


def test_a_deployments_schema_becomes_a_form_and_back() -> None:
    """Each field of the response schema is an input; submitted values come back typed."""
    schema = ApprovalResponse.model_json_schema()
    meta = Metadata(TOKEN, "schema", "C1", "1.2", "1.1")
    view = answer_modal(typed("approval", {}), schema, meta)
    assert_modal_within_limits(view)
    blocks = [b["block_id"] for b in view["blocks"]]
    assert blocks == ["f:decision", "f:comment", "f:arguments", "f:message"]
    values = {
        "f:decision": {"answer": {"type": "radio_buttons", "selected_option": {"value": "reject"}}},
        "f:comment": {"answer": {"type": "plain_text_input", "value": "later"}},
    }
    assert answer_from_state(meta, typed("approval", {}), schema, values) == {
        "decision": "reject",
        "comment": "later",
    }
    errors = errors_for(meta, typed("approval", {}), schema, {"decision": "bad", "answer": "whole"})
    assert errors == {"f:decision": "bad"}


def test_metadata_round_trips_and_refuses_strangers() -> None:
    meta = Metadata(TOKEN, "reject", "C1", "1.2", "1.1")
    assert Metadata.parse(meta.dump()) == meta
    assert len(meta.dump()) <= L.PRIVATE_METADATA
    for raw in ("", "{}", '{"k": "other"}', "[1]", '{"k": "ask", "t": 1}'):
        assert Metadata.parse(raw) is None
