"""Every modal we open can be sent back: its fullest submission fits what the Slack door reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters.slack._modals import Metadata, answer_modal, edit_modal
from adapters.slack._submissions import INTERACTION_BYTES, submission_bytes
from bot.contract.payloads import FormPayload, payload_of
from bot.interactions.approval import ApprovalPayload
from tests.fakes.block_kit import view_problems
from tests.fakes.slack_api import form_body, refusal_of, view_submission
from tests.form_support import API_BODY_BYTES, MAX_ANSWER, largest_api_form
from tests.support import typed

TOKEN = "h." + "p" * 990 + ".s"  # as long as a token may get
FORM = Metadata(TOKEN, "form", "C0123456789", "1700000000.000100", "1700000000.000100")
EDIT = Metadata(TOKEN, "edit", "C0123456789", "1700000000.000100", "1700000000.000100")
# Shown as an 8-character marker (``⟨U+200B⟩``), each marker's brackets escaped by Slack.
HIDDEN = "\u200b"


def _fits_the_api(payload: dict[str, Any]) -> bool:
    """Whether ``/v1`` takes ``payload`` as a form (its body as UTF-8, as a client sends it)."""
    FormPayload.model_validate(payload)
    request = {"idempotency_key": "k", "kind": "form", "payload": payload, "route": {}}
    return len(json.dumps(request, ensure_ascii=False).encode()) <= API_BODY_BYTES


def _longest(make: Any) -> dict[str, Any]:
    """``make(n)`` at the largest ``n`` the API still takes."""
    low, high = 0, API_BODY_BYTES
    while low < high:
        middle = (low + high + 1) // 2
        if _fits_the_api(make(middle)):
            low = middle
        else:
            high = middle - 1
    payload: dict[str, Any] = make(low)
    return payload


def _texts_named_in_hidden_controls(n: int) -> dict[str, Any]:
    """Fifty free-text fields at the longest answer, titled and described in controls that
    each show as a marker eight times their length."""
    properties = {
        f"t{i:02d}": {
            "type": "string",
            "maxLength": MAX_ANSWER,
            "title": HIDDEN * n,
            "description": HIDDEN * n,
        }
        for i in range(50)
    }
    return {"title": "T", "message": "M", "schema": {"type": "object", "properties": properties}}


def _multi_selects_of_hidden_controls(n: int) -> dict[str, Any]:
    """Fifty multi-selects of a hundred choices, each choice shown as its value: hidden controls."""
    items = {"type": "string", "enum": [f"{j}" + HIDDEN * n for j in range(100)]}
    properties = {f"m{i:02d}": {"type": "array", "items": items} for i in range(50)}
    return {"title": "T", "message": "M", "schema": {"type": "object", "properties": properties}}


LARGEST = {
    "every kind, longest descriptions": lambda: largest_api_form(),
    "texts named in hidden controls": lambda: _longest(_texts_named_in_hidden_controls),
    "multi-selects of hidden controls": lambda: _longest(_multi_selects_of_hidden_controls),
}


@pytest.mark.parametrize("kind", list(LARGEST))
def test_the_largest_forms_the_api_takes_come_back_whole(kind: str) -> None:
    """Fifty fields at every limit the API leaves: the modal is one Slack takes, no input is
    shortened, and its fullest submission fits the door."""
    payload = LARGEST[kind]()
    assert _fits_the_api(payload)
    view = answer_modal(typed("form", payload), {}, FORM)
    assert view_problems(view) == []
    assert submission_bytes(view) <= INTERACTION_BYTES
    for block in view["blocks"]:
        element = block.get("element", {})
        if element.get("type") == "plain_text_input":
            spec = payload["schema"]["properties"][block["block_id"].removeprefix("f:")]
            assert element["max_length"] == min(spec.get("maxLength", MAX_ANSWER), MAX_ANSWER)


@pytest.mark.parametrize("typed", ["中", '"', "a"])
def test_a_submission_slack_sends_is_never_larger_than_its_estimate(typed: str) -> None:
    """Every input filled to its limit and every choice chosen, sent as Slack sends it."""
    view = answer_modal(payload_of("form", largest_api_form()), {}, FORM)
    values: dict[str, Any] = {}
    for block in view["blocks"]:
        element = block.get("element")
        if element is None:
            continue
        state: dict[str, Any] = {"type": element["type"]}
        if element["type"] in ("multi_static_select", "checkboxes"):
            state["selected_options"] = element["options"]
        elif "options" in element:
            state["selected_option"] = max(element["options"], key=json.dumps)
        else:
            state["value"] = typed * element.get("max_length", 3000)
        values[block["block_id"]] = {element["action_id"]: state}
    sent = form_body(view_submission(view, values, user="U0ALICE")).encode()
    assert API_BODY_BYTES < len(sent) <= submission_bytes(view)


def test_an_edit_modal_too_large_to_come_back_has_its_inputs_shortened_evenly() -> None:
    """An approval of ninety-eight arguments: each input takes less, never less than its value,
    and the modal still comes back whole."""
    arguments = {f"arg_{i:02d}": "v" * (i + 1) for i in range(98)}
    payload = {
        "action": "deploy",
        "summary": "Deploy",
        "arguments": arguments,
        "allow": ["approve", "reject", "edit"],
    }
    ApprovalPayload.model_validate(payload)
    view = edit_modal(typed("approval", payload), EDIT)
    assert view_problems(view) == []
    assert submission_bytes(view) <= INTERACTION_BYTES
    inputs = [b["element"] for b in view["blocks"] if b["type"] == "input"]
    assert len(inputs) == 98
    assert len({e["max_length"] for e in inputs}) == 1
    assert 98 < inputs[0]["max_length"] < 3000
    small = edit_modal(
        typed("approval", {**payload, "arguments": dict(list(arguments.items())[:3])}), EDIT
    )
    assert [b["element"]["max_length"] for b in small["blocks"] if b["type"] == "input"] == [
        3000
    ] * 3


def _view(**element: Any) -> dict[str, Any]:
    block = {
        "type": "input",
        "block_id": "b",
        "label": {"type": "plain_text", "text": "L"},
        "element": {"type": "static_select", "action_id": "a", "options": _options(1), **element},
    }
    return {
        "type": "modal",
        "callback_id": "c",
        "title": {"type": "plain_text", "text": "T"},
        "submit": {"type": "plain_text", "text": "S"},
        "blocks": [block],
    }


def _options(count: int) -> list[dict[str, Any]]:
    return [
        {"text": {"type": "plain_text", "text": f"o{i}"}, "value": str(i)} for i in range(count)
    ]


PAST_SLACKS_LIMITS = {
    "101 blocks": lambda v: v.update(
        blocks=[{**v["blocks"][0], "block_id": f"b{i}"} for i in range(101)]
    ),
    "101 options": lambda v: v["blocks"][0]["element"].update(options=_options(101)),
    "11 radio buttons": lambda v: v["blocks"][0]["element"].update(
        type="radio_buttons", options=_options(11)
    ),
    "a label of 2,001": lambda v: v["blocks"][0]["label"].update(text="x" * 2001),
    "an option of 76": lambda v: v["blocks"][0]["element"]["options"][0]["text"].update(
        text="x" * 76
    ),
    "a title of 25": lambda v: v["title"].update(text="x" * 25),
    "metadata of 3,001": lambda v: v.update(private_metadata="x" * 3001),
    "an input of 3,001": lambda v: v["blocks"][0].update(
        element={"type": "plain_text_input", "action_id": "a", "max_length": 3001}
    ),
}


@pytest.mark.parametrize("past", list(PAST_SLACKS_LIMITS))
def test_the_fake_refuses_a_view_past_slacks_limits(past: str) -> None:
    """The loopback Slack answers a view past any documented limit as Slack does."""
    view = _view()
    assert refusal_of("views.open", {"view": view}) is None
    PAST_SLACKS_LIMITS[past](view)
    refused = refusal_of("views.open", {"view": view})
    assert refused is not None and refused["error"] == "invalid_arguments"
