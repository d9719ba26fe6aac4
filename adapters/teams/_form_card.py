"""A ``form`` question as Adaptive Card inputs, the submitted data read back, and the closed facts.

Pure functions, no I/O. Each property of the form's schema is one input
``f_<name>``: ``Input.Text`` (styled Email or Url by ``format``),
``Input.Date``, ``Input.Number`` with its bounds, ``Input.Toggle`` for a
boolean, ``Input.ChoiceSet`` for an enum (``isMultiSelect`` for an array of
choices). Choices submit their index, as ``ask_user``'s do, so a value with
a comma survives a multi-select. Reading back only reshapes; whether the
answer fits is decided in ``bot/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters._form_input import typed_number
from adapters.teams._card_kit import (
    Json,
    Limits,
    choice_style,
    cut,
    error_text,
    md,
    plain,
    text,
)
from bot.contract.payloads import FormToolPayload
from bot.display import visible

DATE_TIME_HINT = "e.g. 2026-12-01T16:00:00Z"


def properties(payload: FormToolPayload) -> dict[str, Json]:
    found = payload.form_schema.get("properties")
    if not isinstance(found, Mapping):
        return {}
    return {str(k): dict(v) for k, v in found.items() if isinstance(v, Mapping)}


def field_id(name: str) -> str:
    """A property's input id: ``f_<name>``, a hidden control in the name shown as its marker
    (ids are not read by people, but no raw control rides in a card)."""
    return f"f_{visible(name)}"


def label_of(name: str, spec: Mapping[str, Any]) -> str:
    return str(spec.get("title") or name)


def options(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An enum property's (value, title) pairs, in order, whichever way the schema spells them:
    ``enum`` (with ``enumNames``), ``oneOf`` of const/title, or an array's ``items``."""
    source: Mapping[str, Any] = spec
    if spec.get("type") == "array":
        items = spec.get("items")
        source = items if isinstance(items, Mapping) else {}
    titled = source.get("oneOf") or source.get("anyOf")
    if isinstance(titled, list):
        return [
            (str(o.get("const")), str(o.get("title") or o.get("const")))
            for o in titled
            if isinstance(o, Mapping)
        ]
    values = source.get("enum")
    if not isinstance(values, list):
        return []
    names = source.get("enumNames")
    if isinstance(names, list) and len(names) == len(values):
        return [(str(v), str(n)) for v, n in zip(values, names, strict=True)]
    return [(str(v), str(v)) for v in values]


def kept_fields(payload: FormToolPayload, shown: int | None) -> list[str]:
    """The fields a card has room for: all (``shown`` None), else the first ``shown`` with the
    required ones first, so a card that must leave some out stays answerable if it can."""
    names = list(properties(payload))
    if shown is None or shown >= len(names):
        return names
    required = set(payload.form_schema.get("required") or [])
    first = [n for n in names if n in required] + [n for n in names if n not in required]
    kept = set(first[:shown])
    return [n for n in names if n in kept]


def form_inputs(
    payload: FormToolPayload,
    limits: Limits,
    *,
    errors: Mapping[str, str],
    values: Mapping[str, str],
    only: list[str] | None = None,
) -> list[Json]:
    """One input per property (of ``only``, when given), each labelled with the field's title
    and followed by its description and, when the card is drawn again, its problem."""
    required = set(payload.form_schema.get("required") or [])
    body: list[Json] = []
    for name, spec in properties(payload).items():
        if only is not None and name not in only:
            continue
        input_id = field_id(name)
        element = _input(input_id, spec, limits)
        element["label"] = plain(label_of(name, spec), limits.label)
        if name in required:
            element["isRequired"] = True
            element["errorMessage"] = "This field needs an answer."
        if input_id in values:
            element["value"] = _kept(element, cut(values[input_id], limits.text))
        body.append(element)
        if spec.get("description"):
            described = md(spec["description"], limits.text)
            body.append(text(described, isSubtle=True, size="small", spacing="none"))
        if errors.get(input_id):
            body.append(error_text(md(errors[input_id], limits.text)))
    return body


def _kept(element: Json, value: str) -> Any:
    """What the person had entered, as the input takes it (a number input takes a number)."""
    if element["type"] != "Input.Number":
        return value
    try:
        return float(value) if "." in value or "e" in value.lower() else int(value)
    except ValueError:
        return None


def _input(input_id: str, spec: Json, limits: Limits) -> Json:
    kind, default = spec.get("type"), spec.get("default")
    if kind == "boolean":
        toggle: Json = {
            "type": "Input.Toggle",
            "id": input_id,
            "title": "Yes",
            "valueOn": "true",
            "valueOff": "false",
        }
        toggle["value"] = "true" if default is True else "false"
        return toggle
    choices = options(spec)
    if kind == "array" or choices:
        multi = kind == "array"
        chosen = default if isinstance(default, list) else [default]
        picked = [str(i) for i, (value, _) in enumerate(choices) if value in chosen]
        element: Json = {
            "type": "Input.ChoiceSet",
            "id": input_id,
            "isMultiSelect": multi,
            "style": choice_style(len(choices), multi=multi),
            "choices": [
                {"title": plain(title, limits.label), "value": str(i)}
                for i, (_, title) in enumerate(choices)
            ],
        }
        if picked:
            element["value"] = ",".join(picked)
        return element
    if kind in ("integer", "number"):
        number: Json = {"type": "Input.Number", "id": input_id}
        for key, card_key in (("minimum", "min"), ("maximum", "max")):
            if isinstance(spec.get(key), int | float):
                number[card_key] = spec[key]
        if isinstance(default, int | float) and not isinstance(default, bool):
            number["value"] = default
        return number
    fmt = spec.get("format")
    if fmt == "date":
        date: Json = {"type": "Input.Date", "id": input_id}
        if isinstance(default, str):
            date["value"] = default
        return date
    field: Json = {"type": "Input.Text", "id": input_id}
    if fmt == "email":
        field["style"] = "Email"
    elif fmt == "uri":
        field["style"] = "Url"
    elif fmt == "date-time":
        field["placeholder"] = DATE_TIME_HINT
    elif not isinstance(spec.get("maxLength"), int) or spec["maxLength"] > 150:
        field["isMultiline"] = True
    if isinstance(spec.get("maxLength"), int):
        field["maxLength"] = spec["maxLength"]
    if isinstance(default, str):
        field["value"] = cut(default, limits.text)
    return field


def form_answer(payload: FormToolPayload, data: Mapping[str, Any]) -> Json:
    """The schema's object out of the submitted data; an empty input is left out."""
    answer: Json = {}
    for name, spec in properties(payload).items():
        raw = data.get(field_id(name))
        if raw is None or raw == "":
            if spec.get("type") == "array" and field_id(name) in data:
                answer[name] = []
            continue
        answer[name] = _typed(spec, raw)
    return answer


def _typed(spec: Json, raw: Any) -> Any:
    kind = spec.get("type")
    if kind == "boolean":
        return {"true": True, "false": False}.get(str(raw).lower(), raw)
    if kind in ("integer", "number") and isinstance(raw, str):
        return typed_number(raw, integer=kind == "integer")
    values = [value for value, _ in options(spec)]
    if kind == "array":
        return [_choice(values, part) for part in str(raw).split(",") if part]
    if values:
        return _choice(values, str(raw))
    return raw


def _choice(values: list[str], index: str) -> str:
    """A choice's index -> its value; anything else stays as sent, for validation to refuse."""
    if index.isascii() and index.isdigit() and len(index) <= 6 and int(index) < len(values):
        return values[int(index)]
    return index


def answered_facts(
    payload: FormToolPayload, answer: Mapping[str, Any], limits: Limits
) -> list[tuple[str, str]]:
    """The submitted fields as (label, value) facts, in the schema's order, shown as text
    from outside is: each field's title and each value are the agent's or the person's."""
    facts = []
    for name, spec in properties(payload).items():
        if name in answer:
            value = answer[name]
            if isinstance(value, bool):
                shown = "Yes" if value else "No"
            elif isinstance(value, list):
                shown = ", ".join(map(str, value)) or "(none)"
            else:
                shown = str(value)
            facts.append((md(label_of(name, spec), limits.label), md(shown, limits.label)))
    return facts
