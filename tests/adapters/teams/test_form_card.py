"""A ``form`` as an Adaptive Card: inputs from its schema, the data read back, the closed facts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapters.teams import closed_card, question_card
from adapters.teams._answers import answer_from, errors_for, values_from
from adapters.teams._card_kit import MAX_CARD_BYTES
from bot.contract.payloads import payload_of
from bot.questions.records import QuestionStatus
from tests.adapters.teams.test_cards import (
    TOKEN,
    _asked,
    _every_action_executes_with_a_submit_fallback,
    _record,
)
from tests.doors._doors import Logs, assert_only_a_refusal_recorded
from tests.doors.test_teams_door import TeamsDoor, teams_door
from tests.e2e._teams import actions, card_of, execute, message, texts
from tests.form_support import PAYLOAD, largest_form


def _inputs(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in card["body"] if str(e.get("type", "")).startswith("Input.")}


# What a closed card shows of Ada's answer before its regions: the fields by their titles.
ADAS_FIELDS = [("Your name", "Ada"), ("Age", "36"), ("Agree to the terms", "Yes")]


def _fields(card: dict[str, Any]) -> list[tuple[str, str]]:
    """The closed card's submitted fields, (title, value) in order."""
    facts = next(e for e in card["body"] if e["type"] == "FactSet")["facts"]
    return [(f["title"], f["value"]) for f in facts]


def test_each_property_is_the_input_of_its_kind() -> None:
    card = question_card(_asked("form", PAYLOAD))
    assert texts(card)[:2] == ["Sign up", "Tell us who you are."]
    inputs = _inputs(card)
    assert list(inputs) == [
        "f_name",
        "f_email",
        "f_age",
        "f_agree",
        "f_plan",
        "f_start",
        "f_regions",
    ]
    kinds = {k: v["type"] for k, v in inputs.items()}
    assert kinds == {
        "f_name": "Input.Text",
        "f_email": "Input.Text",
        "f_age": "Input.Number",
        "f_agree": "Input.Toggle",
        "f_plan": "Input.ChoiceSet",
        "f_start": "Input.Date",
        "f_regions": "Input.ChoiceSet",
    }
    assert inputs["f_email"]["style"] == "Email"
    assert (inputs["f_age"]["min"], inputs["f_age"]["max"]) == (0, 150)
    assert {k for k, v in inputs.items() if v.get("isRequired")} == {"f_name", "f_age", "f_agree"}
    assert inputs["f_agree"]["value"] == "false"
    plan, regions = inputs["f_plan"], inputs["f_regions"]
    assert (plan["isMultiSelect"], plan["value"]) == (False, "0")
    assert regions["isMultiSelect"] is True
    assert [c["value"] for c in regions["choices"]] == ["0", "1", "2"]
    assert inputs["f_name"]["label"] == "Your name" and inputs["f_name"]["maxLength"] == 80
    assert [a["title"] for a in actions(card)] == ["Send"]
    _every_action_executes_with_a_submit_fallback(card)
    assert len(json.dumps(card).encode()) <= MAX_CARD_BYTES


def test_submitted_data_reads_back_as_the_schemas_object() -> None:
    data = {
        "token": TOKEN,
        "f_name": "Ada",
        "f_email": "",
        "f_age": "36",
        "f_agree": "true",
        "f_plan": "1",
        "f_start": "2026-12-24",
        "f_regions": "0,2",
    }
    assert answer_from(payload_of("form", PAYLOAD), data) == {
        "name": "Ada",
        "age": 36,
        "agree": True,
        "plan": "pro",
        "start": "2026-12-24",
        "regions": ["eu", "apac"],
    }
    odd = answer_from(
        payload_of("form", PAYLOAD), {"f_age": "old", "f_plan": "9", "f_agree": "false"}
    )
    assert odd == {"age": "old", "plan": "9", "agree": False}


def test_a_refused_card_keeps_the_values_and_shows_each_problem_beside_its_input() -> None:
    fields = {"age": "must be at most 150", "answer": "must be an object"}
    errors = errors_for(payload_of("form", PAYLOAD), fields)
    assert errors == {"f_age": "must be at most 150", "": "must be an object"}
    data = {"f_name": "Ada", "f_age": "200"}
    card = question_card(_asked("form", PAYLOAD, errors=errors, values=values_from(data)))
    inputs = _inputs(card)
    assert inputs["f_name"]["value"] == "Ada" and inputs["f_age"]["value"] == 200
    body = card["body"]
    at = next(i for i, e in enumerate(body) if e.get("id") == "f_age")
    assert body[at + 1]["text"] == "must be at most 150"
    assert "must be an object" in texts(card)


def test_the_closed_card_shows_the_submitted_fields_and_who() -> None:
    record = _record(
        "form",
        QuestionStatus.ANSWERED,
        {"name": "Ada", "age": 36, "agree": True, "regions": []},
        "Alice",
        PAYLOAD,
    )
    card = closed_card(record)
    assert "actions" not in card
    assert _fields(card) == [*ADAS_FIELDS, ("Regions", "(none)")]
    assert texts(card)[-1].startswith("Answered by Alice at ")
    expired = closed_card(replace(record, status=QuestionStatus.EXPIRED, answer=None))
    assert not [e for e in expired["body"] if e["type"] == "FactSet"]


# -- through the real app ---------------------------------------------------------


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[TeamsDoor]:
    async with teams_door(tmp_path, BOT_AGENT="tests.form_support:form_agent") as opened:
        yield opened


async def test_a_form_through_teams_refuses_a_bad_answer_then_takes_a_good_one(
    door: TeamsDoor,
) -> None:
    """A bad answer: the card again, its error beside the input, nothing spent. Then answered."""
    status, _ = await door.activity(message(door.connector.url, "sign up"))
    assert status == 201
    cards = await door.connector.wait_for(door.connector.cards, what="form card")
    (send,) = actions(card_of(cards[0].body))
    before = await door.state()
    with Logs() as logs:
        bad = {**send["data"], "f_name": "Ada", "f_age": "200", "f_agree": "false"}
        status, text = await door.activity(execute(door.connector.url, bad))
    assert status == 200, text
    logs.assert_clean()
    shown = json.loads(text)["value"]
    at = next(i for i, e in enumerate(shown["body"]) if e.get("id") == "f_age")
    assert shown["body"][at + 1]["text"] == "must be at most 150"
    assert_only_a_refusal_recorded(before, await door.state(), "AnswerInvalid")

    good = {**send["data"], "f_name": "Ada", "f_age": "36", "f_agree": "true", "f_regions": "1"}
    status, text = await door.activity(execute(door.connector.url, good))
    assert status == 200, text
    closed = json.loads(text)["value"]
    assert _fields(closed) == [*ADAS_FIELDS, ("Regions", "us")]
    answer = {"age": 36, "agree": True, "name": "Ada", "regions": ["us"]}
    expected = f"Signed up: {json.dumps(answer, sort_keys=True)}"
    await door.connector.wait_for(
        lambda: [t for t in door.connector.texts() if t == expected], what="the run's reply"
    )


def test_the_largest_form_fits_a_teams_card() -> None:
    payload = largest_form()
    card = question_card(_asked("form", payload))
    assert len(json.dumps(card, ensure_ascii=False).encode()) <= MAX_CARD_BYTES
    assert len(_inputs(card)) == 50
