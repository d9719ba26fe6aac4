"""Approve with changes: which decisions an approval allows, and what an edit may be.

An approval's answer is ``approve``, ``reject``, ``edit`` (the full edited
``arguments``) or ``respond`` (a ``message`` the model reads in place of the
tool's result). Which of them a question allows is its payload's ``allow``
(``approve`` and ``reject`` unless the asker says otherwise).

An edit is checked against the shape the question gives its arguments, its
``edit_schema``: the payload's ``arguments_schema`` when it carries one (the
``form`` subset of ``bot/client/form_schema.py``, plus ``object`` and
``array`` properties that a surface shows as a JSON box), else a shape drawn
from the original arguments themselves (the same keys, each value's JSON
type). Surfaces hand back text; ``check_edit`` turns numeric text into
numbers, ``true``/``false`` into booleans and a nested field's JSON text into
its value, so every surface's edit lands as the same JSON. The edited
arguments pass the same size and depth limits as the question's own.

Importable without the server: the client checks an ``arguments_schema``
before it asks, and the bridge checks each edit with the same functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from bot.client.errors import FormAnswerError, FormSchemaError
from bot.client.form_schema import check_form_answer, check_form_schema

Decision = Literal["approve", "reject", "edit", "respond"]
DECISIONS: tuple[Decision, ...] = ("approve", "reject", "edit", "respond")
DEFAULT_ALLOW: tuple[Decision, ...] = ("approve", "reject")
# The decisions that let the action run: counted as approvals under a quorum.
APPROVING = ("approve", "edit")

MAX_ARGUMENTS_BYTES = 256 * 1024
MAX_ARGUMENTS_DEPTH = 32
MAX_MESSAGE = 2000

_JSON_KEYS = frozenset({"type", "title", "description", "default"})
_JSON_TYPES = ("object", "array")


def allowed(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The decisions ``payload``'s question allows (an old question: approve and reject)."""
    given = payload.get("allow")
    if not isinstance(given, list | tuple) or not given:
        return DEFAULT_ALLOW
    return tuple(str(d) for d in given)


def check_allow(allow: Sequence[str]) -> list[Decision]:
    """An ``allow`` list, checked: known decisions, each once, ``approve`` and ``reject`` among
    them (a person can always say yes or no; edit and respond are extra ways)."""
    unknown = [d for d in allow if d not in DECISIONS]
    if unknown:
        raise ValueError(f"allow may list only {', '.join(DECISIONS)}; {unknown[0]!r} is none")
    if len(set(allow)) != len(allow):
        raise ValueError("allow names a decision twice")
    if not {"approve", "reject"} <= set(allow):
        raise ValueError("allow must include approve and reject")
    return [d for d in DECISIONS if d in allow]


def check_arguments(arguments: Any, *, what: str = "arguments") -> None:
    """Refuse arguments past the size or depth a question may carry."""
    if _depth(arguments) > MAX_ARGUMENTS_DEPTH:
        raise ValueError(f"{what} may nest at most {MAX_ARGUMENTS_DEPTH} levels deep")
    size = len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_ARGUMENTS_BYTES:
        raise ValueError(f"{what} must be at most {MAX_ARGUMENTS_BYTES} bytes as JSON")


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


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
    return [r for r in schema.get("required", []) if r in among]


def edit_schema(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The shape an edit of ``payload``'s arguments must have: its ``arguments_schema``, or
    the original arguments' keys (all required) with each value's JSON type."""
    given = payload.get("arguments_schema")
    if isinstance(given, dict) and given:
        return given
    original = payload.get("arguments")
    original = original if isinstance(original, dict) else {}
    properties = {str(name): {"type": _json_type(value)} for name, value in original.items()}
    return {"type": "object", "properties": properties, "required": list(properties)}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"


def field_text(value: Any) -> str:
    """A value as an edit input shows it: text as is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def check_edit(payload: Mapping[str, Any], edited: Any) -> dict[str, Any]:
    """The edited arguments, checked against ``edit_schema(payload)`` and normalised;
    ``FormAnswerError`` names each field that does not fit."""
    if not isinstance(edited, dict):
        raise FormAnswerError({"arguments": "must be a JSON object of the action's arguments"})
    schema = edit_schema(payload)
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    problems = {f"arguments.{name}": "is not an argument of this action" for name in edited}
    problems = {k: v for k, v in problems.items() if k.removeprefix("arguments.") not in properties}
    checked: dict[str, Any] = {}
    flat: dict[str, Any] = {}
    for name, spec in properties.items():
        given = edited.get(name)
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if kind == "null" or kind is None or is_json_field(spec):
            if name not in edited:
                if name in required:
                    problems[f"arguments.{name}"] = "is required"
                continue
            problem, value = _json_value(given, kind)
            if problem:
                problems[f"arguments.{name}"] = problem
                continue
            checked[name] = value
        else:
            flat[name] = spec
    if flat:
        values = {name: edited[name] for name in flat if name in edited}
        form = {"type": "object", "properties": flat, "required": _required(schema, flat)}
        try:
            checked.update(check_form_answer(form, values))
        except FormAnswerError as wrong:
            problems.update({f"arguments.{k}": v for k, v in wrong.fields.items()})
    if problems:
        raise FormAnswerError(problems)
    try:
        check_arguments(checked, what="the edited arguments")
    except ValueError as too_big:
        raise FormAnswerError({"arguments": str(too_big)}) from None
    # In the schema's order, so the same edit from any surface is the same JSON.
    return {name: checked[name] for name in properties if name in checked}


def _json_value(given: Any, kind: str | None) -> tuple[str, Any]:
    """A field shown as JSON: (problem, value), its JSON text parsed. A field whose original
    was null takes any JSON value (text that is not JSON stays text)."""
    if kind in _JSON_TYPES:
        value = given
        if isinstance(given, str):
            try:
                value = json.loads(given)
            except ValueError:
                return "must be JSON", None
        expected = dict if kind == "object" else list
        if not isinstance(value, expected):
            return f"must be a JSON {kind}", None
        return "", value
    if isinstance(given, str):
        try:
            return "", json.loads(given) if given.strip() else None
        except ValueError:
            return "", given
    return "", given


def changes(original: Mapping[str, Any], edited: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(argument, before, after) for each argument the edit changed, in the original's order
    (an argument the edit dropped has ``after`` None, one it added ``before`` None)."""
    names = [*original, *(k for k in edited if k not in original)]
    return [
        (name, original.get(name), edited.get(name))
        for name in names
        if original.get(name) != edited.get(name) or (name in original) != (name in edited)
    ]


def diff_text(original: Mapping[str, Any], edited: Mapping[str, Any], *, most: int = 5) -> str:
    """``"env prod → staging, replicas 2 → 3"``: what an edit changed, short."""
    parts = [
        f"{name} {_short(before)} → {_short(after)}"
        for name, before, after in changes(original, edited)
    ]
    if len(parts) > most:
        parts = [*parts[:most], f"{len(parts) - most} more"]
    return ", ".join(parts) or "none"


def _short(value: Any, *, width: int = 40) -> str:
    text = "(none)" if value is None else field_text(value)
    return text if len(text) <= width else text[: width - 1] + "…"
