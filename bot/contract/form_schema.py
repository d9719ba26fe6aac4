"""The flat JSON Schema subset a ``form`` question may ask, and its answers.

The subset is the one MCP elicitation allows for ``requestedSchema``: an
object whose properties are each a string (with length bounds and an
email/uri/date/date-time format), a number or integer (with bounds), a
boolean, a single-select enum (``enum`` with optional ``enumNames``, or
``oneOf`` of ``const``/``title``), or a multi-select array of such enum
strings. Every surface can render exactly these as a form, so anything else
is refused up front with a sentence naming the property, never at render
time in front of the person.

``check_form_schema`` guards the question; ``check_form_answer`` guards what
comes back, so an answer that completes a question always fits its schema.
``check_arguments_schema`` guards an approval's ``arguments_schema``: the same
subset, plus ``object`` and ``array`` properties a surface shows as JSON.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

from bot.contract.errors import FormAnswerError, FormSchemaError
from bot.contract.json_values import FINITE, is_number

MAX_PROPERTIES = 50
MAX_OPTIONS = 100
MAX_NAME = 100
MAX_STRING = 2000
# Bounds a schema may state: past these a length or a count means nothing a person could
# fill in, and a number past 2**53 no longer survives a JSON round trip in a browser.
MAX_COUNT = 100_000
MAX_MAGNITUDE = 1e15
FORMATS = ("email", "uri", "date", "date-time")

_TOP_KEYS = frozenset({"type", "properties", "required", "title", "description", "$schema"})
_COMMON = frozenset({"type", "title", "description", "default"})
_STRING_KEYS = _COMMON | {"minLength", "maxLength", "format"}
_ENUM_KEYS = _COMMON | {"enum", "enumNames"}
_ONE_OF_KEYS = _COMMON | {"oneOf"}
_NUMBER_KEYS = _COMMON | {"minimum", "maximum"}
_ARRAY_KEYS = _COMMON | {"items", "minItems", "maxItems"}
_ALLOWED = "use string, number, integer, boolean or an enum"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_WHOLE = re.compile(r"[+-]?[0-9]+")
_MOST_DIGITS = 400


def check_form_schema(schema: Any) -> None:
    """Refuse, naming the property, a schema outside the elicitation subset."""
    if not isinstance(schema, dict):
        raise FormSchemaError("The form schema must be a JSON object.")
    if schema.get("type") != "object":
        raise FormSchemaError('The form schema must have "type": "object".')
    unknown = sorted(set(schema) - _TOP_KEYS)
    if unknown:
        raise FormSchemaError(
            f"The form schema may not use {unknown[0]!r}; only type, properties, required, "
            "title and description are allowed at its top."
        )
    for key in ("title", "description"):
        if key in schema and not isinstance(schema[key], str):
            raise FormSchemaError(f"The form schema's {key!r} must be a string.")
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise FormSchemaError('The form schema needs "properties": an object of one or more.')
    if len(properties) > MAX_PROPERTIES:
        raise FormSchemaError(f"A form may ask at most {MAX_PROPERTIES} properties.")
    for name, prop in properties.items():
        if not name or len(name) > MAX_NAME:
            raise FormSchemaError(f"Property names must be 1 to {MAX_NAME} characters.")
        _check_property(name, prop)
    required = _required_names(schema)
    for name in required:
        if name not in properties:
            raise FormSchemaError(f"Required property {name!r} is not among the properties.")
    if len(set(required)) != len(required):
        raise FormSchemaError('The form schema\'s "required" names a property twice.')


def _check_property(name: str, prop: Any) -> None:
    where = f"property {name!r}"
    if not isinstance(prop, dict):
        raise FormSchemaError(f"{where}: its schema must be an object; {_ALLOWED}.")
    for key in ("title", "description"):
        if key in prop and not isinstance(prop[key], str):
            raise FormSchemaError(f"{where}: {key!r} must be a string.")
    kind = prop.get("type")
    if kind == "string" and "enum" in prop:
        _check_keys(where, prop, _ENUM_KEYS)
        values = _check_choices(where, prop["enum"])
        names = prop.get("enumNames")
        if names is not None and (
            not isinstance(names, list)
            or len(names) != len(values)
            or not all(isinstance(n, str) for n in names)
        ):
            raise FormSchemaError(f"{where}: enumNames must be one string per enum value.")
        _check_default_choice(where, prop, values)
    elif kind == "string" and "oneOf" in prop:
        _check_keys(where, prop, _ONE_OF_KEYS)
        _check_default_choice(where, prop, _titled_choices(where, prop["oneOf"]))
    elif kind == "string":
        _check_keys(where, prop, _STRING_KEYS)
        low = _check_count(where, prop, "minLength")
        high = _check_count(where, prop, "maxLength")
        if low is not None and high is not None and low > high:
            raise FormSchemaError(f"{where}: minLength is above maxLength.")
        if "format" in prop and prop["format"] not in FORMATS:
            raise FormSchemaError(
                f"{where}: format {prop['format']!r} is not allowed; use one of {list(FORMATS)}."
            )
        if "default" in prop:
            _check_string(name, prop, prop["default"], what="its default")
    elif kind in ("number", "integer"):
        _check_keys(where, prop, _NUMBER_KEYS)
        least = _check_bound(where, prop, "minimum")
        most = _check_bound(where, prop, "maximum")
        if least is not None and most is not None and least > most:
            raise FormSchemaError(f"{where}: minimum is above maximum.")
        if "default" in prop:
            if not _is_numeric(prop["default"]):
                raise FormSchemaError(f"{where}: its default must be a number.")
            _check_magnitude(where, "its default", prop["default"])
            _check_number(name, prop, prop["default"], what="its default")
    elif kind == "boolean":
        _check_keys(where, prop, _COMMON)
        if "default" in prop and not isinstance(prop["default"], bool):
            raise FormSchemaError(f"{where}: its default must be true or false.")
    elif kind == "array":
        _check_array(name, prop)
    else:
        shown = "no type" if kind is None else f"type {kind!r}"
        raise FormSchemaError(f"{where}: {shown} is not allowed; {_ALLOWED}.")


def _check_array(name: str, prop: dict[str, Any]) -> None:
    where = f"property {name!r}"
    _check_keys(where, prop, _ARRAY_KEYS)
    items = prop.get("items")
    if not isinstance(items, dict):
        raise FormSchemaError(f"{where}: an array must be a multi-select of enum strings.")
    if items.get("type") == "string" and set(items) == {"type", "enum"}:
        values = _check_choices(where, items["enum"])
    elif set(items) == {"anyOf"} or set(items) == {"type", "anyOf"}:
        if items.get("type", "string") != "string":
            raise FormSchemaError(f"{where}: multi-select items must be strings.")
        values = _titled_choices(where, items["anyOf"])
    else:
        raise FormSchemaError(
            f"{where}: an array must be a multi-select whose items are "
            '{"type": "string", "enum": [...]} or {"anyOf": [{"const", "title"}, ...]}.'
        )
    low = _check_count(where, prop, "minItems")
    high = _check_count(where, prop, "maxItems")
    if low is not None and high is not None and low > high:
        raise FormSchemaError(f"{where}: minItems is above maxItems.")
    if "default" in prop:
        default = prop["default"]
        if not isinstance(default, list) or any(v not in values for v in default):
            raise FormSchemaError(f"{where}: its default must be a list of the enum values.")


def _check_keys(where: str, prop: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(prop) - allowed)
    if unknown:
        raise FormSchemaError(
            f"{where}: {unknown[0]!r} is not allowed here; the subset allows {sorted(allowed)}."
        )


def _check_choices(where: str, values: Any) -> list[str]:
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise FormSchemaError(f"{where}: enum must be a non-empty list of strings.")
    if len(values) > MAX_OPTIONS:
        raise FormSchemaError(f"{where}: at most {MAX_OPTIONS} enum values.")
    if len(set(values)) != len(values):
        raise FormSchemaError(f"{where}: enum values must be distinct.")
    return values


def _titled_choices(where: str, options: Any) -> list[str]:
    if not isinstance(options, list) or not all(
        isinstance(o, dict)
        and set(o) == {"const", "title"}
        and isinstance(o["const"], str)
        and isinstance(o["title"], str)
        for o in options
    ):
        raise FormSchemaError(f"{where}: each option must be {{'const': str, 'title': str}}.")
    return _check_choices(where, [o["const"] for o in options])


def _check_default_choice(where: str, prop: dict[str, Any], values: list[str]) -> None:
    if "default" in prop and prop["default"] not in values:
        raise FormSchemaError(f"{where}: its default is not one of the enum values.")


def _check_count(where: str, prop: dict[str, Any], key: str) -> int | None:
    value = prop.get(key)
    if value is None and key not in prop:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise FormSchemaError(f"{where}: {key} must be a non-negative integer.")
    if value > MAX_COUNT:
        raise FormSchemaError(f"{where}: {key} must be at most {MAX_COUNT:,}.")
    return value


def _check_bound(where: str, prop: dict[str, Any], key: str) -> float | None:
    if key not in prop:
        return None
    value = prop[key]
    if not _is_numeric(value):
        raise FormSchemaError(f"{where}: {key} must be a number.")
    _check_magnitude(where, key, value)
    return float(value)


def _check_magnitude(where: str, key: str, value: float) -> None:
    # NaN, Infinity and an integer past a double first: none of them compares as a size.
    if not is_number(value) or abs(value) > MAX_MAGNITUDE:
        raise FormSchemaError(f"{where}: {key} must be between -1e15 and 1e15.")


def _is_numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_form_answer(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    """The answer object, checked against ``schema`` and normalised.

    A surface hands back what its inputs hold, often text: numeric text
    becomes a number, ``"true"``/``"false"`` a boolean, an integral float an
    integer, and an empty optional value is left out. ``schema`` must
    already have passed ``check_form_schema``.
    """
    if not isinstance(value, dict):
        raise FormAnswerError({"answer": "must be a JSON object of the form's fields."})
    properties: dict[str, Any] = schema["properties"]
    # Every property's problem at once, so a form can show each beside its field.
    problems = {str(name): "is not in the form" for name in value if name not in properties}
    answer: dict[str, Any] = {}
    for name, prop in properties.items():
        given = value.get(name)
        if given is None or given == "" or given == []:
            if name in schema.get("required", []):
                problems[name] = "is required"
            continue
        try:
            answer[name] = _check_value(name, prop, given)
        except FormSchemaError as wrong:
            # A phrase for beside the field: "must be at most 150", "is not a valid email".
            problem = str(wrong).removeprefix(f"property {name!r}: ").removeprefix("the answer ")
            problems[name] = problem.rstrip(".")
    if problems:
        raise FormAnswerError(problems)
    return answer


def _check_value(name: str, prop: dict[str, Any], given: Any) -> Any:
    kind = prop["type"]
    if kind == "string":
        return _check_string(name, prop, given, what="the answer")
    if kind in ("number", "integer"):
        return _check_number(name, prop, given, what="the answer")
    if kind == "boolean":
        if isinstance(given, bool):
            return given
        if given in ("true", "false"):
            return given == "true"
        raise FormSchemaError(f"property {name!r}: the answer must be true or false.")
    return _check_selection(name, prop, given)


def _choices(prop: dict[str, Any]) -> list[str] | None:
    if "enum" in prop:
        return list(prop["enum"])
    if "oneOf" in prop:
        return [o["const"] for o in prop["oneOf"]]
    return None


def _check_string(name: str, prop: dict[str, Any], given: Any, *, what: str) -> str:
    where = f"property {name!r}"
    if not isinstance(given, str):
        raise FormSchemaError(f"{where}: {what} must be a string.")
    choices = _choices(prop)
    if choices is not None:
        if given not in choices:
            raise FormSchemaError(f"{where}: {given!r} is not one of {choices}.")
        return given
    low, high = prop.get("minLength", 0), prop.get("maxLength", MAX_STRING)
    if len(given) < low:
        raise FormSchemaError(f"{where}: {what} must be at least {low} characters.")
    if len(given) > min(high, MAX_STRING):
        raise FormSchemaError(
            f"{where}: {what} must be at most {min(high, MAX_STRING)} characters."
        )
    fmt = prop.get("format")
    if fmt is not None and not _fits_format(fmt, given):
        raise FormSchemaError(f"{where}: {what} is not a valid {fmt}.")
    return given


def _fits_format(fmt: str, text: str) -> bool:
    if fmt == "email":
        return _EMAIL.match(text) is not None
    if fmt == "uri":
        parts = urlsplit(text)
        return bool(parts.scheme) and bool(parts.netloc or parts.path) and " " not in text
    if fmt == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return False
        return len(text) == len("2026-12-01")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    # RFC 3339 wants the offset; a naive time names no instant.
    return "T" in text.upper() and moment.tzinfo is not None


def _check_number(name: str, prop: dict[str, Any], given: Any, *, what: str) -> int | float:
    where = f"property {name!r}"
    number: Any = _number_of(given.strip()) if isinstance(given, str) else given
    if not _is_numeric(number):
        raise FormSchemaError(f"{where}: {what} must be a number.")
    if not is_number(number):
        raise FormSchemaError(f"{where}: {what} {FINITE}.")
    if prop["type"] == "integer":
        if number != int(number):
            raise FormSchemaError(f"{where}: {what} must be a whole number.")
        number = int(number)
    if "minimum" in prop and number < prop["minimum"]:
        raise FormSchemaError(f"{where}: {what} must be at least {prop['minimum']}.")
    if "maximum" in prop and number > prop["maximum"]:
        raise FormSchemaError(f"{where}: {what} must be at most {prop['maximum']}.")
    return number  # type: ignore[no-any-return]


def _number_of(text: str) -> Any:
    """Typed text as the number it spells (a whole number exactly, however long, never
    through a float), or None when it spells none."""
    if _WHOLE.fullmatch(text):
        # Python reads at most a few thousand digits; past a double it is refused anyway.
        return int(text) if len(text) <= _MOST_DIGITS else float("inf")
    try:
        return float(text)
    except ValueError:
        return None


def _check_selection(name: str, prop: dict[str, Any], given: Any) -> list[str]:
    where = f"property {name!r}"
    items = prop["items"]
    choices = list(items["enum"]) if "enum" in items else [o["const"] for o in items["anyOf"]]
    chosen = [given] if isinstance(given, str) else given
    if not isinstance(chosen, list) or not all(isinstance(c, str) for c in chosen):
        raise FormSchemaError(f"{where}: the answer must be a list of the options.")
    if len(chosen) > len(choices) or len(set(chosen)) != len(chosen):
        raise FormSchemaError(f"{where}: each option may be chosen once.")
    unknown = [c for c in chosen if c not in choices]
    if unknown:
        raise FormSchemaError(f"{where}: {unknown[0]!r} is not one of {choices}.")
    if len(chosen) < prop.get("minItems", 0):
        raise FormSchemaError(f"{where}: choose at least {prop['minItems']}.")
    if "maxItems" in prop and len(chosen) > prop["maxItems"]:
        raise FormSchemaError(f"{where}: choose at most {prop['maxItems']}.")
    return chosen


# -- an approval's arguments_schema: the subset, plus nested values shown as JSON --

_JSON_KEYS = frozenset({"type", "title", "description", "default"})
_JSON_TYPES = ("object", "array")


def is_json_field(spec: Mapping[str, Any]) -> bool:
    """A property a surface shows as a JSON box: an object, or an array that is not a
    multi-select of choices."""
    kind = spec.get("type")
    if kind == "object":
        return True
    if kind != "array":
        return False
    items = spec.get("items")
    return not (isinstance(items, Mapping) and ("enum" in items or "anyOf" in items))


def check_arguments_schema(schema: Any) -> None:
    """Refuse, naming the property, an ``arguments_schema`` outside the subset: ``form``'s,
    plus ``object`` and ``array`` properties shown as JSON."""
    if not isinstance(schema, dict):
        raise FormSchemaError("The arguments schema must be a JSON object.")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise FormSchemaError('The arguments schema needs "properties": an object.')
    flat = {name: prop for name, prop in properties.items() if not _json_shaped(prop)}
    for name, prop in properties.items():
        if name not in flat:
            unknown = sorted(set(prop) - _JSON_KEYS)
            if unknown:
                raise FormSchemaError(
                    f"property {name!r}: {unknown[0]!r} is not allowed on a field shown as "
                    f"JSON; it may have {sorted(_JSON_KEYS)}."
                )
    if flat:
        check_form_schema({**schema, "properties": flat, "required": _required(schema, flat)})
    elif schema.get("type") != "object" or not properties:
        check_form_schema(schema)  # names what is wrong with an empty or untyped schema


def _json_shaped(prop: Any) -> bool:
    return isinstance(prop, dict) and prop.get("type") in _JSON_TYPES and is_json_field(prop)


def _required(schema: Mapping[str, Any], among: Mapping[str, Any]) -> list[str]:
    return [r for r in _required_names(schema) if r in among]


def _required_names(schema: Mapping[str, Any]) -> list[str]:
    """The schema's ``required``, refused in one sentence unless a list of names."""
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise FormSchemaError('The form schema\'s "required" must be a list of property names.')
    return required
