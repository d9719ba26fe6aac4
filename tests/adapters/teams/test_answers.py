"""Card data -> answers: indexes to labels, comma-joined multi-selects, errors placed by input."""

from __future__ import annotations

import dataclasses
import json

from adapters.teams import CardContext, question_card
from adapters.teams._answers import answer_from, errors_for, values_from
from bot.contract.payloads import payload_of
from bot.interactions.approval import approval_registration
from bot.testing import question
from tests.support import open_question

PAYLOAD = {
    "questions": [
        question("Where?", "staging", "prod", header="Env"),
        question("Checks?", "lint, fast", "tests", multi_select=True),
        question("Why?"),
    ]
}

# An approval whose answer needs nothing of what it asks.
ASKED_TO_APPROVE = {"action": "deploy", "summary": "Ship"}


def test_ask_user_inputs_become_answers_keyed_by_question() -> None:
    """Indexes map to labels (labels with commas survive); free text passes as typed."""
    data = {"hitl": 1, "token": "t", "q0": "1", "q1": "0,1", "q2": "because"}
    assert answer_from(payload_of("ask_user", PAYLOAD), data) == {
        "answers": {"Where?": "prod", "Checks?": ["lint, fast", "tests"], "Why?": "because"}
    }


def test_what_does_not_map_is_passed_on_for_validation_to_refuse() -> None:
    """An unknown index stays as sent; a missing input is an empty answer."""
    answer = answer_from(payload_of("ask_user", PAYLOAD), {"q0": "9"})
    assert answer["answers"] == {"Where?": "9", "Checks?": [], "Why?": ""}


def test_approval_and_schema_answers() -> None:
    """Approval: decision and comment; a schema: f_ inputs, arrays split, blanks dropped."""
    assert answer_from(
        payload_of("approval", ASKED_TO_APPROVE), {"decision": "reject", "comment": "no"}
    ) == {
        "decision": "reject",
        "comment": "no",
    }
    schema = {"properties": {"regions": {"type": "array"}, "note": {"type": "string"}}}
    data = {"f_regions": "eu,us", "f_note": "", "f_percent": "5", "token": "t"}
    assert answer_from(payload_of("rollout", {}), data, schema=schema) == {
        "regions": ["eu", "us"],
        "percent": "5",
    }


def test_errors_go_beside_the_input_they_name() -> None:
    """ask_user problems name the question; approval's comment; a schema field; else the top."""
    fields = {"answer": "'Env': '9' is not one of ['staging', 'prod']"}
    assert errors_for(payload_of("ask_user", PAYLOAD), fields) == {"q0": fields["answer"]}
    assert errors_for(payload_of("approval", ASKED_TO_APPROVE), {"comment": "too long"}) == {
        "comment": "too long"
    }
    assert errors_for(payload_of("approval", ASKED_TO_APPROVE), {"decision": "bad"}) == {"": "bad"}
    assert errors_for(payload_of("rollout", {}), {"percent": "not a number"}) == {
        "f_percent": "not a number"
    }
    assert values_from({"q0": "1", "token": "t", "comment": "x", "hitl": 1}) == {
        "q0": "1",
        "comment": "x",
    }


EDITABLE = {
    "action": "deploy",
    "summary": "Deploy web",
    "arguments": {"service": "web", "environment": "production", "replicas": 2},
    "allow": ["approve", "reject", "edit", "respond"],
}


def test_an_edit_reads_each_argument_input_over_the_arguments_asked() -> None:
    """``a<index>`` inputs overwrite their argument; one left out keeps its value."""
    data = {"decision": "edit", "a1": "staging", "a2": "3", "comment": "smaller"}
    assert answer_from(payload_of("approval", EDITABLE), data) == {
        "decision": "edit",
        "comment": "smaller",
        "arguments": {"service": "web", "environment": "staging", "replicas": "3"},
    }
    assert errors_for(
        payload_of("approval", EDITABLE), {"arguments.replicas": "must be a number"}
    ) == {"a2": "must be a number"}


def test_an_input_the_card_drew_and_teams_left_out_was_emptied() -> None:
    """Teams sends no value for an empty input: one the card drew (``edits``) reads as
    emptied, so validation can name it; one it did not draw keeps the value asked."""
    data = {"decision": "edit", "edits": "a0,a1", "a0": "web"}
    answer = answer_from(payload_of("approval", EDITABLE), data)
    assert answer["arguments"] == {"service": "web", "environment": "", "replicas": 2}


def test_a_response_reads_the_message_input() -> None:
    """Respond: the message box is the answer's message."""
    answer = answer_from(
        payload_of("approval", EDITABLE), {"decision": "respond", "message": "later"}
    )
    assert answer == {"decision": "respond", "comment": "", "message": "later"}


def test_the_editable_card_is_prefilled_with_the_arguments() -> None:
    """Each argument's input holds its value; the actions include the two extra ways."""
    card = question_card(
        CardContext(
            question=open_question("approval", EDITABLE, expires_at=1_800_000_000.0),
            token="t.o.k",
            asked_for="Ana",
            who_may_answer="Anyone",
        )
    )
    text = json.dumps(card)
    assert '"id": "a1"' in text and '"value": "production"' in text and '"value": "2"' in text
    assert "Approve with changes" in text and '"title": "Respond"' in text


def test_the_edit_action_names_the_inputs_the_card_drew() -> None:
    """The edit's data lists its inputs, so an emptied one (Teams leaves it out) is told
    apart from an argument kept as asked; refused for being empty, it is drawn empty."""
    asked = CardContext(
        question=open_question("approval", EDITABLE, expires_at=1_800_000_000.0),
        token="t.o.k",
        asked_for="Ana",
        who_may_answer="Anyone",
    )
    edit = next(a for a in question_card(asked)["actions"] if a["title"] == "Approve with changes")
    assert edit["data"]["edits"] == "a0,a1,a2"
    refused = question_card(dataclasses.replace(asked, errors={"a1": "is required"}))
    (environment,) = [e for e in refused["body"] if e.get("id") == "a1"]
    assert environment["value"] == ""


def test_an_edit_keeps_the_arguments_the_schema_does_not_list() -> None:
    """Arguments the ``arguments_schema`` does not list get no input and are named as kept;
    the edit of a listed one comes back with them as asked, and is accepted."""
    payload = {
        **EDITABLE,
        "arguments": {**EDITABLE["arguments"], "dry_run": True},
        "arguments_schema": {
            "type": "object",
            "properties": {"environment": {"type": "string"}},
        },
    }
    asked = CardContext(
        question=open_question("approval", payload, expires_at=1_800_000_000.0),
        token="t.o.k",
        asked_for="Ana",
        who_may_answer="Anyone",
    )
    card = question_card(asked)
    assert [e["id"] for e in card["body"] if str(e.get("id", "")).startswith("a")] == ["a0"]
    notes = [str(e.get("text")) for e in card["body"] if "Kept as asked" in str(e.get("text"))]
    # The names as markdown shows them: an underscore escaped.
    assert notes == ["Kept as asked (not editable here): service, replicas, dry\\_run"]
    answer = answer_from(
        payload_of("approval", payload), {"decision": "edit", "edits": "a0", "a0": "staging"}
    )
    clean = approval_registration().validate_answer(answer, payload)
    assert clean["arguments"] == {
        "service": "web",
        "environment": "staging",
        "replicas": 2,
        "dry_run": True,
    }
