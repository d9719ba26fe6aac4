"""Approve with changes: what an edit of an approval's arguments may be, and what it changed.

Which decisions a question allows is ``bot/contract/decisions.py``. An edit is
checked against the shape the question gives its arguments, its
``edit_schema``: the payload's ``arguments_schema`` when it carries one (the
``form`` subset of ``bot/contract/form_schema.py``, plus ``object`` and
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

from bot.contract.decisions import MAX_ARGUMENTS_DEPTH, check_arguments
from bot.contract.errors import FormAnswerError, JsonTextError
from bot.contract.form_schema import _JSON_TYPES, check_form_answer, is_json_field
from bot.contract.json_values import FINITE, first_unkept_number, read_json_text, same_json
from bot.contract.payloads import ApprovalPayload

# What an edit is checked against: a stored question's typed payload, or an approval's
# payload as the client holds it (a ``/v1`` question object's JSON).
AskedApproval = ApprovalPayload | Mapping[str, Any]


def _asked(payload: AskedApproval) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The arguments asked and their schema (None: none given)."""
    if isinstance(payload, ApprovalPayload):
        return payload.arguments, payload.arguments_schema
    # The client's JSON: read as it came, since the server checked it when it was asked.
    arguments, schema = payload.get("arguments"), payload.get("arguments_schema")
    return (
        dict(arguments) if isinstance(arguments, Mapping) else {},
        schema if isinstance(schema, dict) else None,
    )


def edit_schema(payload: AskedApproval) -> dict[str, Any]:
    """The shape an edit of ``payload``'s arguments must have: its ``arguments_schema``, or
    the original arguments' keys (all required) with each value's JSON type."""
    original, given = _asked(payload)
    if given:
        return given
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


def unlisted(payload: AskedApproval) -> list[str]:
    """The original arguments ``edit_schema(payload)`` does not list, in their order: not the
    approver's to change, so an edit keeps them as asked, and a form shows them as such."""
    properties = edit_schema(payload).get("properties", {})
    return [name for name in _asked(payload)[0] if name not in properties]


def field_text(value: Any) -> str:
    """A value as an edit input shows it: text as is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def check_edit(payload: AskedApproval, edited: Any) -> dict[str, Any]:
    """The edited arguments, checked against ``edit_schema(payload)`` and normalised;
    ``FormAnswerError`` names each field that does not fit.

    An argument of the original that the schema does not list is not the approver's to
    change: it is kept as asked, whether the edit sends it back unchanged (as Slack and
    Teams do) or leaves it out (as the console does); sent back changed, it is refused."""
    if not isinstance(edited, dict):
        raise FormAnswerError({"arguments": "must be a JSON object of the action's arguments"})
    schema = edit_schema(payload)
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    original = _asked(payload)[0]
    problems: dict[str, str] = {}
    for name, value in edited.items():
        if name in properties:
            continue
        if name not in original:
            problems[f"arguments.{name}"] = "is not an argument of this action"
        elif not _unchanged(value, original[name]):
            problems[f"arguments.{name}"] = "is not editable here; it is kept as asked"
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
    kept = {name: original[name] for name in unlisted(payload)}
    # In the original's order, then the schema's, so the same edit from any surface is the
    # same JSON, and an argument the approver did not touch stays where the agent put it.
    result = {
        name: checked.get(name, kept.get(name))
        for name in original
        if name in checked or name in kept
    }
    result.update({name: checked[name] for name in properties if name in checked})
    try:
        check_arguments(result, what="the edited arguments")
    except ValueError as too_big:
        raise FormAnswerError({"arguments": str(too_big)}) from None
    return result


def _unchanged(given: Any, asked: Any) -> bool:
    try:
        return same_json(given, asked)
    except ValueError:  # a number JSON cannot carry is no value asked
        return False


def _json_value(given: Any, kind: str | None) -> tuple[str, Any]:
    """A field shown as JSON: (problem, value), its JSON text read as the bridge keeps JSON
    (``bot/contract/json_values.py``). A field whose original was null takes any JSON value
    (text that is not JSON stays text)."""
    if kind in _JSON_TYPES:
        value = given
        if isinstance(given, str):
            try:
                value = read_json_text(given, max_depth=MAX_ARGUMENTS_DEPTH)
            except JsonTextError as wrong:
                return wrong.message, None
        expected = dict if kind == "object" else list
        if not isinstance(value, expected):
            return f"must be a JSON {kind}", None
        return _kept_numbers(value)
    if isinstance(given, str):
        if not given.strip():
            return "", None
        try:
            return _kept_numbers(read_json_text(given, max_depth=MAX_ARGUMENTS_DEPTH))
        except JsonTextError as wrong:
            return ("", given) if wrong.syntax else (wrong.message, None)
    return _kept_numbers(given)


def _kept_numbers(value: Any) -> tuple[str, Any]:
    """A value sent as JSON rather than typed: (problem, value), its numbers held to what
    typed text is held to."""
    where = first_unkept_number(value)
    if where is None:
        return "", value
    subject = f"its {where!r}" if where else "it"
    return f"{subject} {FINITE}; NaN and Infinity are not JSON", None


def changes(original: Mapping[str, Any], edited: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(argument, before, after) for each argument the edit changed, in the original's order
    (an argument the edit dropped has ``after`` None, one it added ``before`` None)."""
    names = [*original, *(k for k in edited if k not in original)]
    return [
        (name, original.get(name), edited.get(name))
        for name in names
        if (name in original) != (name in edited)
        or not _unchanged(edited.get(name), original.get(name))
    ]


def diff_text(original: Mapping[str, Any], edited: Mapping[str, Any], *, most: int = 5) -> str:
    """``"env prod → staging, replicas 2 → 3"``: what an edit changed, short. Text is shown
    in quotes where it would otherwise hide the change (``env "prod" → "prod "``, or a
    ``"1"`` that replaced a ``1``)."""
    parts = [
        f"{name} {_short(before, quoted=_hidden(before, after))} → "
        f"{_short(after, quoted=_hidden(before, after))}"
        for name, before, after in changes(original, edited)
    ]
    if len(parts) > most:
        parts = [*parts[:most], f"{len(parts) - most} more"]
    return ", ".join(parts) or "none"


def _hidden(before: Any, after: Any) -> bool:
    """Shown as plain text, the change would not show: the two read alike, or text starts or
    ends with a space a reader cannot see."""
    edged = any(isinstance(v, str) and (not v or v != v.strip()) for v in (before, after))
    return edged or _short(before, quoted=False) == _short(after, quoted=False)


def _short(value: Any, *, quoted: bool, width: int = 40) -> str:
    if value is None:
        text = "(none)"
    elif quoted:
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = field_text(value)
    return text if len(text) <= width else text[: width - 1] + "…"
