"""``form``: the schema subset it accepts, and answers checked against each question's schema."""

from __future__ import annotations

from typing import Any

import pytest

from bot.human.errors import AnswerValidationError, HumanInteractionError
from bot.interactions.form import FORM, FormToolPayload, form_registration, form_tool
from tests.form_support import GOOD, PAYLOAD


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# The subset itself is checked by the one checker (bot/contract/form_schema.py) and
# tested beside it (tests/client/test_form_schema.py); here, what the form
# interaction makes of it: each answer checked against its own question's schema.
@pytest.mark.parametrize(
    ("answer", "wrong"),
    [
        ({"age": 1, "agree": True}, {"name"}),
        ({**GOOD, "name": ""}, {"name"}),
        ({**GOOD, "age": 36.5}, {"age"}),
        ({**GOOD, "age": True}, {"age"}),
        ({**GOOD, "age": -1}, {"age"}),
        ({**GOOD, "agree": "maybe"}, {"agree"}),
        ({**GOOD, "plan": "gold"}, {"plan"}),
        ({**GOOD, "email": "ada@"}, {"email"}),
        ({**GOOD, "start": "2026-02-30"}, {"start"}),
        ({**GOOD, "regions": ["mars"]}, {"regions"}),
        ({**GOOD, "name": "x" * 81}, {"name"}),
        ({**GOOD, "extra": 1}, {"extra"}),
        ({"name": "", "age": -1, "agree": True}, {"name", "age"}),
    ],
)
def test_a_wrong_answer_names_each_wrong_field(answer: dict[str, Any], wrong: set[str]) -> None:
    """Every wrong field at once, each with its own sentence, so a form shows them in place."""
    registration = form_registration()
    with pytest.raises(AnswerValidationError) as refused:
        registration.validate_answer(answer, PAYLOAD)
    assert set(refused.value.fields) == wrong
    assert all(problem and not problem.endswith(".") for problem in refused.value.fields.values())


def test_a_good_answer_comes_back_clean() -> None:
    """A JSON 36.0 for an integer field is the integer 36; optional fields may be left out."""
    registration = form_registration()
    assert registration.validate_answer({**GOOD, "age": 36.0}, PAYLOAD) == GOOD
    minimal = {"name": "Ada", "age": 1, "agree": False}
    assert registration.validate_answer(minimal, PAYLOAD) == minimal
    with pytest.raises(AnswerValidationError):
        registration.validate_answer(["not", "an", "object"], PAYLOAD)


def test_the_registration_checks_payloads_and_answers_against_the_questions_schema() -> None:
    registration = form_registration()
    assert registration.name == FORM == "form"
    clean = registration.validate_payload(PAYLOAD)
    assert clean == {**PAYLOAD}
    with pytest.raises(HumanInteractionError, match="'x'"):
        registration.validate_payload({**PAYLOAD, "schema": _schema(x={"type": "object"})})
    with pytest.raises(HumanInteractionError, match="title"):
        registration.validate_payload({**PAYLOAD, "title": ""})
    assert registration.validate_answer(GOOD, clean) == GOOD
    with pytest.raises(AnswerValidationError) as refused:
        registration.validate_answer({"name": "Ada"}, clean)
    assert set(refused.value.fields) == {"age", "agree"}


def test_the_tool_advertises_the_payloads_schema() -> None:
    """The model sees title, message and schema (the alias, not the Python field name)."""
    tool = form_tool()
    assert tool.name == FORM
    assert set(tool.parameters["properties"]) == {"title", "message", "schema"}
    assert tool.parameters["required"] == ["title", "schema"]
    assert FormToolPayload.model_validate(PAYLOAD).model_dump() == PAYLOAD
