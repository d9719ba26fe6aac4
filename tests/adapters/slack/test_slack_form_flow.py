"""A ``form`` through the real app and a loopback Slack Web API: modal, refusal, answer, edit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.doors._doors import Logs, assert_only_a_refusal_recorded
from tests.doors._slack_door import FORM, SlackDoor, interaction, slack_door
from tests.fakes.slack_api import (
    block_actions,
    buttons,
    event_callback,
    mention,
    posted_message,
    view_submission,
)

ALICE = "U0ALICE"


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[SlackDoor]:
    async with slack_door(tmp_path, BOT_AGENT="tests.form_support:form_agent") as opened:
        yield opened


async def _open_modal(door: SlackDoor) -> tuple[Any, dict[str, Any]]:
    event = event_callback(mention("sign up", user=ALICE))
    assert (await door.slack(json.dumps(event).encode()))[0] == 200
    (asked,) = await door.fake.wait_for("chat.postMessage", where=lambda c: bool(buttons(c.args)))
    (button,) = buttons(asked.args)
    action = {k: button[k] for k in ("type", "action_id", "text", "value")}
    clicked = block_actions(action, user=ALICE, message=posted_message(asked))
    assert (await door.slack(interaction(clicked), FORM))[0] == 200
    (opened,) = await door.fake.wait_for("views.open")
    return asked, opened.args["view"]


def _values(**fields: dict[str, Any]) -> dict[str, Any]:
    return {f"f:{name}": {"answer": value} for name, value in fields.items()}


GOOD = _values(
    name={"type": "plain_text_input", "value": "Ada"},
    age={"type": "number_input", "value": "36"},
    agree={"type": "radio_buttons", "selected_option": {"value": "true"}},
    regions={"type": "checkboxes", "selected_options": [{"value": "0"}]},
)


async def test_a_bad_submission_is_refused_in_the_modal_and_spends_nothing(
    door: SlackDoor,
) -> None:
    """Each wrong field gets its own error; no edit, no resume, only the refusal's audit row."""
    _, view = await _open_modal(door)
    assert [b.get("block_id") for b in view["blocks"][1:4]] == ["f:name", "f:email", "f:age"]
    bad = _values(
        name={"type": "plain_text_input", "value": "Ada"},
        email={"type": "email_text_input", "value": "nope"},
        age={"type": "number_input", "value": "200"},
    )
    before = await door.state()
    with Logs() as logs:
        status, body = await door.slack(interaction(view_submission(view, bad, user=ALICE)), FORM)
    assert status == 200
    logs.assert_clean()
    assert json.loads(body) == {
        "response_action": "errors",
        "errors": {
            "f:agree": "is required",
            "f:email": "is not a valid email",
            "f:age": "must be at most 150",
        },
    }
    assert_only_a_refusal_recorded(before, await door.state(), "AnswerInvalid")
    assert not door.fake.of("chat.update")


async def test_a_good_submission_resumes_the_run_and_the_message_shows_the_fields(
    door: SlackDoor,
) -> None:
    asked, view = await _open_modal(door)
    status, body = await door.slack(interaction(view_submission(view, GOOD, user=ALICE)), FORM)
    assert status == 200 and body == ""
    ts = asked.response["ts"]
    (edit,) = await door.fake.wait_for("chat.update", where=lambda c: c.args["ts"] == ts)
    assert not buttons(edit.args)
    fields = next(b for b in edit.args["blocks"] if "fields" in b)["fields"]
    assert [f["text"] for f in fields] == [
        "*Your name*\nAda",
        "*Age*\n36",
        "*Agree to the terms*\nYes",
        "*Regions*\neu",
    ]
    assert f"Answered by <@{ALICE}>" in json.dumps(edit.args["blocks"])
    answer = {"age": 36, "agree": True, "name": "Ada", "regions": ["eu"]}
    expected = f"Signed up: {json.dumps(answer, sort_keys=True)}"
    await door.fake.wait_for("chat.postMessage", where=lambda c: c.args.get("text") == expected)
