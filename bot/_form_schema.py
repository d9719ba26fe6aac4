"""A form's flat JSON Schema (the subset MCP elicitation allows), and answers checked against it.

Private and deliberately small: the shared checker of the agents API
(``bot/client/form_schema.py``: ``check_form_schema`` / ``check_form_answer``)
is meant to replace it, so both functions keep that module's shape: the
schema or the answer in, a clean copy out, or ``FormError`` naming the
property. An answer's check collects every property's problem at once, so a
form can show each one beside its own field.

The subset: an object whose properties are each a string (``minLength``,
``maxLength``, ``format`` email / uri / date / date-time, or ``enum``), a
number or integer (``minimum``, ``maximum``), a boolean, or an array of
strings drawn from an ``enum`` (a multi-select); with ``required``,
``default``, ``title`` and ``description``. Nothing nests.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from bot.errors import BotError

MAX_PROPERTIES = 50
FORMATS = ("email", "uri", "date", "date-time")
_TOP = {"type", "properties", "required", "title", "description", "$schema"}
_COMMON = {"type", "title", "description", "default"}
_KEYS = {
    "string": _COMMON | {"minLength", "maxLength", "format", "enum", "enumNames"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"items", "minItems", "maxItems", "uniqueItems"},
}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d:\d\d)")


class FormError(BotError, ValueError):
    """A schema or an answer outside the subset; ``fields`` maps each property to its problem."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        self.fields = dict(fields)
        self.field = next(iter(self.fields), "")
        super().__init__("; ".join(f"{name!r}: {problem}" for name, problem in self.fields.items()))


def check_schema(schema: Any) -> dict[str, Any]:
    """The schema as given, once it is inside the subset; FormError naming the property if not."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise FormError({"schema": 'must be an object schema ({"type": "object", ...})'})
    unknown = sorted(set(schema) - _TOP)
    if unknown:
        raise FormError({"schema": f"{unknown[0]!r} is not allowed in a form"})
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not 0 < len(properties) <= MAX_PROPERTIES:
        raise FormError({"schema": f"needs 1 to {MAX_PROPERTIES} properties"})
    for name, spec in properties.items():
        _check_property(str(name), spec)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise FormError({"required": "must be a list of property names"})
    for name in required:
        if name not in properties:
            raise FormError({name: "is required but is not a property"})
    return dict(schema)


def _check_property(name: str, spec: Any) -> None:
    if not isinstance(spec, Mapping) or spec.get("type") not in _KEYS:
        raise FormError({name: "must have a type: string, number, integer, boolean or array"})
    kind = str(spec["type"])
    unknown = sorted(set(spec) - _KEYS[kind])
    if unknown:
        raise FormError({name: f"{unknown[0]!r} is not allowed on a {kind}"})
    for key in ("title", "description"):
        if key in spec and not isinstance(spec[key], str):
            raise FormError({name: f"{key} must be a string"})
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        if key in spec and not _is_int(spec[key], minimum=0):
            raise FormError({name: f"{key} must be a whole number, 0 or more"})
    for key in ("minimum", "maximum"):
        if key in spec and not _is_number(spec[key]):
            raise FormError({name: f"{key} must be a number"})
    for low, high in (("minLength", "maxLength"), ("minimum", "maximum"), ("minItems", "maxItems")):
        if low in spec and high in spec and spec[low] > spec[high]:
            raise FormError({name: f"{low} is more than {high}, so no answer could fit"})
    if kind == "string" and "format" in spec and spec["format"] not in FORMATS:
        raise FormError({name: f"format must be one of {', '.join(FORMATS)}"})
    if kind == "string" and "enum" in spec:
        _check_enum(name, spec["enum"])
    if kind == "array":
        items = spec.get("items")
        if not isinstance(items, Mapping) or items.get("type", "string") != "string":
            raise FormError({name: "an array must be of strings drawn from an enum"})
        if set(items) - {"type", "enum"}:
            raise FormError({name: "an array's items take only type and enum"})
        _check_enum(name, items.get("enum"))
    if "default" in spec:
        problem = _problem(spec, spec["default"])
        if problem:
            raise FormError({name: f"the default {problem}"})


def _check_enum(name: str, enum: Any) -> None:
    if not isinstance(enum, list) or not enum or not all(isinstance(v, str) for v in enum):
        raise FormError({name: "enum must be a non-empty list of strings"})
    if len(set(enum)) != len(enum):
        raise FormError({name: "enum values must be unique"})


def form_answer(schema: Mapping[str, Any], value: Any) -> dict[str, Any]:
    """The answer, once it is the schema's object; FormError with every property's problem."""
    if not isinstance(value, Mapping):
        raise FormError({"answer": "must be an object of the form's fields"})
    properties: Mapping[str, Any] = schema.get("properties") or {}
    problems: dict[str, str] = {}
    for name in value:
        if name not in properties:
            problems[str(name)] = "is not a field of this form"
    for name in schema.get("required") or []:
        if value.get(name) in (None, "", []):
            problems.setdefault(name, "needs an answer")
    clean: dict[str, Any] = {}
    for name, spec in properties.items():
        if name in problems or value.get(name) is None:
            continue
        problem = _problem(spec, value[name])
        if problem:
            problems[name] = problem
        else:
            clean[name] = _normal(spec, value[name])
    if problems:
        raise FormError(problems)
    return clean


def _problem(spec: Mapping[str, Any], value: Any) -> str:
    """What is wrong with ``value`` for this property, or '' when it fits."""
    kind = spec.get("type")
    if kind == "boolean":
        return "" if isinstance(value, bool) else "must be yes or no"
    if kind in ("number", "integer"):
        return _number_problem(spec, value)
    if kind == "array":
        return _choices_problem(spec, value)
    if not isinstance(value, str):
        return "must be text"
    enum = spec.get("enum")
    if isinstance(enum, list):
        return "" if value in enum else f"must be one of: {', '.join(enum)}"
    if "minLength" in spec and len(value) < spec["minLength"]:
        return f"must be at least {spec['minLength']} characters"
    if "maxLength" in spec and len(value) > spec["maxLength"]:
        return f"must be at most {spec['maxLength']} characters"
    return _format_problem(str(spec.get("format") or ""), value)


def _number_problem(spec: Mapping[str, Any], value: Any) -> str:
    whole = spec.get("type") == "integer"
    if not _is_number(value) or (whole and isinstance(value, float) and not value.is_integer()):
        return "must be a whole number" if whole else "must be a number"
    if "minimum" in spec and value < spec["minimum"]:
        return f"must be at least {spec['minimum']}"
    if "maximum" in spec and value > spec["maximum"]:
        return f"must be at most {spec['maximum']}"
    return ""


def _choices_problem(spec: Mapping[str, Any], value: Any) -> str:
    allowed = (spec.get("items") or {}).get("enum") or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of choices"
    if len(set(value)) != len(value):
        return "each choice may be chosen once"
    unknown = [v for v in value if v not in allowed]
    if unknown:
        return f"{unknown[0]!r} is not one of: {', '.join(allowed)}"
    if "minItems" in spec and len(value) < spec["minItems"]:
        return f"choose at least {spec['minItems']}"
    if "maxItems" in spec and len(value) > spec["maxItems"]:
        return f"choose at most {spec['maxItems']}"
    return ""


def _format_problem(kind: str, value: str) -> str:
    if kind == "email" and not _EMAIL.fullmatch(value):
        return "must be an email address"
    if kind == "uri" and not _URI.fullmatch(value):
        return "must be a link (https://...)"
    if kind == "date" and not _parses(_DATE, date.fromisoformat, value):
        return "must be a date (YYYY-MM-DD)"
    if kind == "date-time" and not _parses(_DATE_TIME, datetime.fromisoformat, value):
        return "must be a date and time with its zone (2026-12-01T16:00:00Z)"
    return ""


def _parses(pattern: re.Pattern[str], parse: Any, value: str) -> bool:
    if not pattern.fullmatch(value):
        return False
    try:
        parse(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _normal(spec: Mapping[str, Any], value: Any) -> Any:
    # JSON may carry 36 as 36.0; an integer field keeps the integer.
    if spec.get("type") == "integer":
        return int(value)
    return list(value) if isinstance(value, list) else value


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    # An int is never infinite, and math.isfinite cannot take one past a float's range.
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_int(value: Any, *, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum
