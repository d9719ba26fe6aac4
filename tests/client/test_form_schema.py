"""The form schema subset (MCP elicitation's) and the answers checked against it."""

from __future__ import annotations

from typing import Any

import pytest

from bot.contract.form_schema import (
    FormSchemaError,
    check_arguments_schema,
    check_form_answer,
    check_form_schema,
)


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


GOOD: list[dict[str, Any]] = [
    _schema(name={"type": "string"}),
    _schema(
        email={"type": "string", "format": "email", "title": "Email", "description": "Work"},
        bio={"type": "string", "minLength": 1, "maxLength": 200, "default": "hi"},
        site={"type": "string", "format": "uri"},
        day={"type": "string", "format": "date"},
        at={"type": "string", "format": "date-time"},
    ),
    _schema(
        age={"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        score={"type": "number", "minimum": -1.5, "maximum": 1.5},
        ok={"type": "boolean", "default": False},
    ),
    _schema(
        color={"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        size={
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
        tags={
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["a"],
        },
        titled={
            "type": "array",
            "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
        },
    ),
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Deploy",
        "description": "Details",
        "properties": {"why": {"type": "string"}},
        "required": ["why"],
    },
]


@pytest.mark.parametrize("schema", GOOD)
def test_schemas_in_the_subset_pass(schema: dict[str, Any]) -> None:
    """Every shape MCP elicitation allows is accepted as is."""
    check_form_schema(schema)


BAD: list[tuple[dict[str, Any], str]] = [
    (_schema(age={"type": "object", "properties": {}}), "property 'age': type 'object'"),
    (_schema(age={"type": "null"}), "property 'age': type 'null'"),
    (_schema(age={"anyOf": [{"type": "string"}, {"type": "null"}]}), "property 'age': no type"),
    (_schema(tags={"type": "array", "items": {"type": "integer"}}), "property 'tags'"),
    (_schema(tags={"type": "array", "items": {"type": "object"}}), "property 'tags'"),
    (_schema(name={"type": "string", "pattern": "^a"}), "property 'name': 'pattern'"),
    (_schema(name={"type": "string", "format": "ipv4"}), "property 'name': format 'ipv4'"),
    (_schema(name={"type": "string", "minLength": 5, "maxLength": 2}), "property 'name'"),
    (_schema(name={"type": "string", "minLength": -1}), "property 'name': minLength"),
    (_schema(n={"type": "integer", "exclusiveMinimum": 0}), "property 'n': 'exclusiveMinimum'"),
    (_schema(n={"type": "number", "minimum": "0"}), "property 'n': minimum"),
    (_schema(n={"type": "number", "minimum": 3, "maximum": 1}), "property 'n'"),
    (_schema(n={"type": "integer", "default": "3"}), "property 'n'"),
    (_schema(ok={"type": "boolean", "default": "yes"}), "property 'ok'"),
    (_schema(c={"type": "string", "enum": []}), "property 'c': enum"),
    (_schema(c={"type": "string", "enum": ["a", "a"]}), "property 'c'"),
    (_schema(c={"type": "string", "enum": [1, 2]}), "property 'c'"),
    (_schema(c={"type": "string", "enum": ["a"], "enumNames": ["A", "B"]}), "property 'c'"),
    (_schema(c={"type": "string", "enum": ["a"], "default": "b"}), "property 'c'"),
    (_schema(c={"type": "string", "oneOf": [{"const": "a"}]}), "property 'c'"),
    (_schema(c={"type": "string", "title": 3}), "property 'c': 'title'"),
    (_schema(c="string"), "property 'c'"),
    (
        _schema(t={"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["z"]}),
        "property 't'",
    ),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "'b'"),
    (
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
        "'additionalProperties'",
    ),
    ({"type": "array", "items": {"type": "string"}}, '"type": "object"'),
    ({"type": "object", "properties": {}}, "properties"),
    ("not a schema", "JSON object"),
]


@pytest.mark.parametrize(("schema", "named"), BAD)
def test_schemas_outside_the_subset_are_refused_naming_the_property(
    schema: Any, named: str
) -> None:
    """Each refusal is one sentence that names what is wrong and where."""
    with pytest.raises(FormSchemaError) as caught:
        check_form_schema(schema)
    message = str(caught.value)
    assert named in message
    assert message.endswith(".")
    assert "\n" not in message
    assert isinstance(caught.value, ValueError)


_TAGS = {"type": "string", "enum": ["a", "b"]}
OUT_OF_BOUNDS: list[tuple[dict[str, Any], str]] = [
    ({"type": "string", "maxLength": 10**18}, "property 'p': maxLength must be at most 100,000."),
    ({"type": "string", "minLength": 10**18}, "property 'p': minLength must be at most 100,000."),
    ({"type": "number", "minimum": 1e308}, "property 'p': minimum must be between -1e15 and 1e15."),
    (
        {"type": "integer", "maximum": -(10**16)},
        "property 'p': maximum must be between -1e15 and 1e15.",
    ),
    (
        {"type": "number", "default": 1e300},
        "property 'p': its default must be between -1e15 and 1e15.",
    ),
    (
        {"type": "integer", "minimum": int("9" * 400)},
        "property 'p': minimum must be between -1e15 and 1e15.",
    ),
    (
        {"type": "number", "maximum": float("nan")},
        "property 'p': maximum must be between -1e15 and 1e15.",
    ),
    (
        {"type": "integer", "default": -int("9" * 400)},
        "property 'p': its default must be between -1e15 and 1e15.",
    ),
    (
        {"type": "array", "items": _TAGS, "maxItems": 10**12},
        "property 'p': maxItems must be at most 100,000.",
    ),
    (
        {"type": "array", "items": _TAGS, "minItems": 100_001},
        "property 'p': minItems must be at most 100,000.",
    ),
]


@pytest.mark.parametrize(("prop", "sentence"), OUT_OF_BOUNDS)
def test_lengths_counts_and_numbers_past_the_bounds_are_refused(
    prop: dict[str, Any], sentence: str
) -> None:
    """Lengths and item counts at most 100,000; numbers within 1e15 either way."""
    with pytest.raises(FormSchemaError) as caught:
        check_form_schema(_schema(p=prop))
    assert str(caught.value) == sentence


def test_the_bounds_themselves_are_allowed() -> None:
    """100,000 and ±1e15 exactly are inside the bounds."""
    check_form_schema(
        _schema(
            s={"type": "string", "minLength": 0, "maxLength": 100_000},
            n={"type": "number", "minimum": -1e15, "maximum": 1e15, "default": 1e15},
            a={"type": "array", "items": _TAGS, "maxItems": 100_000},
        )
    )


def test_the_example_sentence() -> None:
    """A nested object is refused with the sentence the docs quote."""
    with pytest.raises(FormSchemaError) as caught:
        check_form_schema(_schema(age={"type": "object"}))
    assert str(caught.value) == (
        "property 'age': type 'object' is not allowed; "
        "use string, number, integer, boolean or an enum."
    )


def test_too_many_properties_are_refused() -> None:
    """A form is bounded, so a huge schema costs nothing to refuse."""
    with pytest.raises(FormSchemaError, match="at most 50"):
        check_form_schema(_schema(**{f"p{i}": {"type": "string"} for i in range(51)}))


FORM = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email"},
        "bio": {"type": "string", "minLength": 2, "maxLength": 5},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "maximum": 1.5},
        "ok": {"type": "boolean"},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "maxItems": 2,
        },
    },
    "required": ["email", "age"],
}


def test_a_good_answer_is_normalised() -> None:
    """Text from a surface's inputs becomes the schema's types; empty optionals drop out."""
    answer = check_form_answer(
        FORM,
        {
            "email": "ada@example.org",
            "bio": "hey",
            "site": "https://example.org/x",
            "day": "2026-12-01",
            "at": "2026-12-01T17:00:00Z",
            "age": "42",
            "score": 1.25,
            "ok": "true",
            "color": "red",
            "size": "s",
            "tags": ["a", "c"],
        },
    )
    assert answer["age"] == 42
    assert isinstance(answer["age"], int)
    assert answer["ok"] is True
    assert answer["tags"] == ["a", "c"]
    assert check_form_answer(FORM, {"email": "a@b.co", "age": 3.0, "bio": ""}) == {
        "email": "a@b.co",
        "age": 3,
    }


BAD_ANSWERS: list[tuple[dict[str, Any], str]] = [
    ({"age": 3}, "property 'email' is required"),
    ({"email": "a@b.co"}, "property 'age' is required"),
    ({"email": "nope", "age": 3}, "property 'email'"),
    ({"email": "a@b.co", "age": 3.5}, "property 'age': must be a whole number"),
    ({"email": "a@b.co", "age": 151}, "property 'age': must be at most 150"),
    ({"email": "a@b.co", "age": True}, "property 'age'"),
    ({"email": "a@b.co", "age": "many"}, "property 'age'"),
    ({"email": "a@b.co", "age": 1, "bio": "x"}, "property 'bio': must be at least 2"),
    ({"email": "a@b.co", "age": 1, "bio": "x" * 6}, "property 'bio'"),
    ({"email": "a@b.co", "age": 1, "site": "not a uri"}, "property 'site'"),
    ({"email": "a@b.co", "age": 1, "day": "12/01/2026"}, "property 'day'"),
    ({"email": "a@b.co", "age": 1, "at": "2026-12-01T17:00:00"}, "property 'at'"),
    ({"email": "a@b.co", "age": 1, "ok": "maybe"}, "property 'ok'"),
    ({"email": "a@b.co", "age": 1, "color": "blue"}, "property 'color'"),
    ({"email": "a@b.co", "age": 1, "size": "l"}, "property 'size'"),
    ({"email": "a@b.co", "age": 1, "tags": ["a", "z"]}, "property 'tags'"),
    ({"email": "a@b.co", "age": 1, "tags": ["a", "b", "c"]}, "property 'tags'"),
    ({"email": "a@b.co", "age": 1, "tags": ["a", "a"]}, "property 'tags'"),
    ({"email": "a@b.co", "age": 1, "extra": 1}, "property 'extra' is not in the form"),
    ({"email": "a@b.co", "age": int("9" * 400)}, "'age': must be a finite number within ±1e308"),
    ({"email": "a@b.co", "age": "9" * 400}, "'age': must be a finite number within ±1e308"),
    ({"email": "a@b.co", "age": "9" * 5000}, "'age': must be a finite number within ±1e308"),
    ({"email": "a@b.co", "age": 1, "score": float("nan")}, "'score': must be a finite number"),
    ({"email": "a@b.co", "age": 1, "score": "-inf"}, "'score': must be a finite number"),
    ({"email": "a@b.co", "age": 1, "score": "1e999"}, "'score': must be a finite number"),
]


@pytest.mark.parametrize(("answer", "named"), BAD_ANSWERS)
def test_bad_answers_are_refused_naming_the_property(answer: dict[str, Any], named: str) -> None:
    """An answer outside its schema never completes a question."""
    with pytest.raises(FormSchemaError) as caught:
        check_form_answer(FORM, answer)
    assert named in str(caught.value)


def test_an_answer_must_be_an_object() -> None:
    """A list or a string is not a form's answer."""
    with pytest.raises(FormSchemaError, match="JSON object"):
        check_form_answer(FORM, ["a@b.co"])


def test_typed_whole_numbers_keep_every_digit() -> None:
    """Text of a whole number is read as one, never through a float, so nothing rounds."""
    schema = _schema(id={"type": "integer"}, size={"type": "number"})
    answer = check_form_answer(schema, {"id": "12345678901234567891", "size": "3"})
    assert answer == {"id": 12345678901234567891, "size": 3}


@pytest.mark.parametrize("required", [99999, "n", [1], [{"n": 1}], None])
def test_an_arguments_schema_whose_required_is_not_a_list_of_names_is_refused(
    required: object,
) -> None:
    """Found by the fuzzer: a number for ``required`` was a TypeError, not the sentence."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "default": 3}},
        "required": required,
    }
    with pytest.raises(FormSchemaError, match='"required" must be a list of property names'):
        check_arguments_schema(schema)
