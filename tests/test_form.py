"""``form``: the schema subset it accepts, and answers checked against each question's schema."""

from __future__ import annotations

from typing import Any

import pytest

from bot._form_schema import FormError, check_schema, form_answer
from bot.errors import BotError
from bot.form import FORM, FormPayload, form_registration, form_tool
from bot.human.errors import AnswerValidationError, HumanInteractionError
from tests.form_support import GOOD, PAYLOAD, SCHEMA


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("schema", "field", "problem"),
    [
        ({"type": "array"}, "schema", "object schema"),
        (_schema(), "schema", "1 to 50 properties"),
        ({**_schema(a={"type": "string"}), "allOf": []}, "schema", "'allOf' is not allowed"),
        (_schema(a={"type": "object"}), "a", "must have a type"),
        (_schema(a={"type": "string", "pattern": "x"}), "a", "'pattern' is not allowed"),
        (_schema(a={"type": "string", "format": "ipv4"}), "a", "format must be one of"),
        (_schema(a={"type": "string", "enum": []}), "a", "non-empty list of strings"),
        (_schema(a={"type": "string", "enum": ["x", "x"]}), "a", "unique"),
        (_schema(a={"type": "integer", "minimum": "0"}), "a", "minimum must be a number"),
        (_schema(a={"type": "string", "maxLength": -1}), "a", "maxLength must be a whole"),
        (_schema(a={"type": "array", "items": {"type": "number"}}), "a", "strings drawn"),
        (_schema(a={"type": "integer", "maximum": 5, "default": 9}), "a", "the default must"),
        (_schema(a={"type": "number", "minimum": 5, "maximum": 1}), "a", "no answer could fit"),
        (_schema(a={"type": "string", "minLength": 9, "maxLength": 1}), "a", "minLength is more"),
        ({**_schema(a={"type": "boolean"}), "required": ["b"]}, "b", "is not a property"),
    ],
)
def test_a_schema_outside_the_subset_is_refused_naming_the_property(
    schema: dict[str, Any], field: str, problem: str
) -> None:
    with pytest.raises(FormError) as raised:
        check_schema(schema)
    assert raised.value.field == field
    assert problem in raised.value.fields[field]
    assert isinstance(raised.value, BotError) and isinstance(raised.value, ValueError)


def test_the_subset_is_accepted_as_given() -> None:
    assert check_schema(SCHEMA) == SCHEMA


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        ({"age": 1, "agree": True}, {"name": "needs an answer"}),
        ({**GOOD, "name": ""}, {"name": "needs an answer"}),
        ({**GOOD, "age": 36.5}, {"age": "must be a whole number"}),
        ({**GOOD, "age": True}, {"age": "must be a whole number"}),
        ({**GOOD, "age": "36"}, {"age": "must be a whole number"}),
        ({**GOOD, "age": -1}, {"age": "must be at least 0"}),
        ({**GOOD, "agree": "true"}, {"agree": "must be yes or no"}),
        ({**GOOD, "plan": "gold"}, {"plan": "must be one of: free, pro"}),
        ({**GOOD, "email": "ada@"}, {"email": "must be an email address"}),
        ({**GOOD, "start": "2026-02-30"}, {"start": "must be a date (YYYY-MM-DD)"}),
        ({**GOOD, "regions": ["eu", "eu"]}, {"regions": "each choice may be chosen once"}),
        ({**GOOD, "regions": ["mars"]}, {"regions": "'mars' is not one of: eu, us, apac"}),
        ({**GOOD, "name": "x" * 81}, {"name": "must be at most 80 characters"}),
        ({**GOOD, "extra": 1}, {"extra": "is not a field of this form"}),
    ],
)
def test_a_wrong_answer_names_each_wrong_field(
    answer: dict[str, Any], problems: dict[str, str]
) -> None:
    with pytest.raises(FormError) as raised:
        form_answer(SCHEMA, answer)
    assert raised.value.fields == problems


def test_a_good_answer_comes_back_clean() -> None:
    """A JSON 36.0 for an integer field is the integer 36; optional fields may be left out."""
    assert form_answer(SCHEMA, {**GOOD, "age": 36.0}) == GOOD
    assert form_answer(SCHEMA, {"name": "Ada", "age": 1, "agree": False}) == {
        "name": "Ada",
        "age": 1,
        "agree": False,
    }
    with pytest.raises(FormError):
        form_answer(SCHEMA, ["not", "an", "object"])


def test_formats_take_what_they_name() -> None:
    schema = _schema(
        at={"type": "string", "format": "date-time"},
        link={"type": "string", "format": "uri"},
        big={"type": "integer"},
        ratio={"type": "number", "maximum": 1},
    )
    good = {"at": "2026-12-01T16:00:00Z", "link": "https://example.org/x", "big": 10**400}
    assert form_answer(schema, {**good, "ratio": 0.5}) == {**good, "ratio": 0.5}
    for field, value in [
        ("at", "2026-12-01 16:00"),
        ("at", "2026-12-01T16:00:00"),
        ("link", "not a link"),
        ("ratio", float("nan")),
        ("ratio", 2),
    ]:
        with pytest.raises(FormError) as raised:
            form_answer(schema, {field: value})
        assert raised.value.field == field


def test_the_registration_checks_payloads_and_answers_against_the_questions_schema() -> None:
    registration = form_registration()
    assert registration.name == FORM == "form"
    clean = registration.validate_payload(PAYLOAD)
    assert clean == {**PAYLOAD}
    with pytest.raises(HumanInteractionError, match="'x': must have a type"):
        registration.validate_payload({**PAYLOAD, "schema": _schema(x={"type": "object"})})
    with pytest.raises(HumanInteractionError, match="title"):
        registration.validate_payload({**PAYLOAD, "title": ""})
    assert registration.validate_answer(GOOD, clean) == GOOD
    with pytest.raises(AnswerValidationError) as refused:
        registration.validate_answer({"name": "Ada"}, clean)
    assert refused.value.fields == {"age": "needs an answer", "agree": "needs an answer"}


def test_the_tool_advertises_the_payloads_schema() -> None:
    """The model sees title, message and schema (the alias, not the Python field name)."""
    tool = form_tool()
    assert tool.name == FORM
    assert set(tool.parameters["properties"]) == {"title", "message", "schema"}
    assert tool.parameters["required"] == ["title", "schema"]
    assert FormPayload.model_validate(PAYLOAD).model_dump() == PAYLOAD
