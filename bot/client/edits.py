"""Approve with changes: what an edit of an approval's arguments may be, and what it changed.

Which decisions a question allows is ``bot/client/decisions.py``. An edit is
checked against the shape the question gives its arguments, its
``edit_schema``: the payload's ``arguments_schema`` when it carries one (the
``form`` subset of ``bot/client/form_schema.py``, plus ``object`` and
``array`` properties that a surface shows as a JSON box), else a shape drawn
from the original arguments themselves (the same keys, each value's JSON
type). Surfaces hand back text; ``check_edit`` turns numeric text into
numbers, ``true``/``false`` into booleans and a nested field's JSON text into
its value, so every surface's edit lands as the same JSON. The edited
arguments pass the same size and depth limits as the question's own.

Importable without the server, as every surface and the bridge check an
edit with the same functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bot.client.decisions import check_arguments
from bot.client.errors import FormAnswerError
from bot.client.form_schema import _JSON_TYPES, check_form_answer, is_json_field


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
        form = {
            "type": "object",
            "properties": flat,
            "required": [r for r in required if r in flat],
        }
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
