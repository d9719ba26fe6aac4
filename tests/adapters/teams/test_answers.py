"""Card data -> answers: indexes to labels, comma-joined multi-selects, errors placed by input."""

from __future__ import annotations

from adapters.teams._answers import answer_from, errors_for, values_from
from bot.testing import question

PAYLOAD = {
    "questions": [
        question("Where?", "staging", "prod", header="Env"),
        question("Checks?", "lint, fast", "tests", multi_select=True),
        question("Why?"),
    ]
}


def test_ask_user_inputs_become_answers_keyed_by_question() -> None:
    """Indexes map to labels (labels with commas survive); free text passes as typed."""
    data = {"hitl": 1, "token": "t", "q0": "1", "q1": "0,1", "q2": "because"}
    assert answer_from("ask_user", PAYLOAD, data) == {
        "answers": {"Where?": "prod", "Checks?": ["lint, fast", "tests"], "Why?": "because"}
    }


def test_what_does_not_map_is_passed_on_for_validation_to_refuse() -> None:
    """An unknown index stays as sent; a missing input is an empty answer."""
    answer = answer_from("ask_user", PAYLOAD, {"q0": "9"})
    assert answer["answers"] == {"Where?": "9", "Checks?": [], "Why?": ""}


def test_approval_and_schema_answers() -> None:
    """Approval: decision and comment; a schema: f_ inputs, arrays split, blanks dropped."""
    assert answer_from("approval", {}, {"decision": "reject", "comment": "no"}) == {
        "decision": "reject",
        "comment": "no",
    }
    schema = {"properties": {"regions": {"type": "array"}, "note": {"type": "string"}}}
    data = {"f_regions": "eu,us", "f_note": "", "f_percent": "5", "token": "t"}
    assert answer_from("rollout", {}, data, schema=schema) == {
        "regions": ["eu", "us"],
        "percent": "5",
    }


def test_errors_go_beside_the_input_they_name() -> None:
    """ask_user problems name the question; approval's comment; a schema field; else the top."""
    fields = {"answer": "'Env': '9' is not one of ['staging', 'prod']"}
    assert errors_for("ask_user", PAYLOAD, fields) == {"q0": fields["answer"]}
    assert errors_for("approval", {}, {"comment": "too long"}) == {"comment": "too long"}
    assert errors_for("approval", {}, {"decision": "bad"}) == {"": "bad"}
    assert errors_for("rollout", {}, {"percent": "not a number"}) == {"f_percent": "not a number"}
    assert values_from({"q0": "1", "token": "t", "comment": "x", "hitl": 1}) == {
        "q0": "1",
        "comment": "x",
    }
