"""Questions as Adaptive Cards: pure functions from a pending question to card JSON.

Input ids are the contract with ``_answers``: ``q<i>`` for the i-th
``ask_user`` question (choices submit option indexes, so labels with commas
survive a multi-select), ``comment`` for an approval, ``f_<field>`` for a
``form``'s schema (``_form_card``) and for a deployment's own schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.teams._card_kit import (
    Json,
    Limits,
    answer_data,
    card,
    cut,
    error_text,
    execute,
    facts,
    fit,
    subtle,
    text,
    title,
)
from adapters.teams._form_card import form_inputs
from bot.service.messages import expires_text, level_text

# A single choice shows as buttons up to this many options (Teams shows six actions).
MAX_BUTTONS = 5
MAX_FREE_TEXT = 2000
RISK_COLOR = {"high": "attention", "medium": "warning", "low": "good"}


@dataclass(frozen=True, slots=True)
class Asked:
    """A question to draw: what was asked, the token, and what every card shows."""

    name: str
    payload: Json
    token: str
    interrupt_id: str
    expires_at: float
    asked_for: str
    who_may_answer: str
    response_schema: Json | None = None
    # Input id -> problem ("" for the card as a whole), and the values to keep.
    errors: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)
    # Under a quorum, the tally so far ("1 of 2 approved: @bo"); "" otherwise.
    tally: str = ""
    # The escalation steps taken (``level_text``); 0: none.
    level: int = 0


def question_card(asked: Asked) -> Json:
    """The card for any interaction, within Teams' size limit."""
    if asked.name == "ask_user":
        return fit(lambda limits: _ask_user(asked, limits))
    if asked.name == "approval":
        return fit(lambda limits: _approval(asked, limits))
    if asked.name == "form":
        return fit(lambda limits: _form(asked, limits))
    return fit(lambda limits: _schema(asked, limits))


def _frame(asked: Asked, heading: str, inner: list[Json], limits: Limits) -> list[Json]:
    body = [title(cut(heading, limits.label))]
    general = asked.errors.get("")
    if general:
        body.append(text(cut(general, limits.text), color="attention"))
    body += inner
    who = f"Asked for {asked.asked_for}. " if asked.asked_for else ""
    body.append(subtle(f"{who}{asked.who_may_answer} {expires_text(asked.expires_at)}"))
    if asked.tally:
        body.append(subtle(asked.tally))
    if asked.level:
        body.append(subtle(level_text(asked.level)))
    return body


def _with_error(asked: Asked, input_id: str, element: Json, limits: Limits) -> list[Json]:
    problem = asked.errors.get(input_id)
    return [element, error_text(cut(problem, limits.text))] if problem else [element]


def _ask_user(asked: Asked, limits: Limits) -> Json:
    questions = [q for q in asked.payload.get("questions", []) if isinstance(q, dict)]
    data = answer_data(asked.token, asked.interrupt_id)
    only = questions[0] if len(questions) == 1 else None
    if only and not only.get("multi_select") and 0 < len(only.get("options", [])) <= MAX_BUTTONS:
        return _buttons(asked, only, limits)
    inner: list[Json] = []
    for index, question in enumerate(questions):
        inner += _question(asked, f"q{index}", question, limits)
    heading = "The agent has a question" if len(questions) == 1 else "The agent has questions"
    body = _frame(asked, heading, inner, limits)
    return card(body, [execute("Send answer", data, style="positive")])


def _buttons(asked: Asked, question: Json, limits: Limits) -> Json:
    options = question["options"]
    inner = [text(cut(str(question.get("question", "")), limits.text))]
    described = [(str(o.get("label", "")), str(o.get("description", ""))) for o in options]
    if any(description for _, description in described):
        inner.append(facts([(cut(k, limits.label), cut(v, limits.label)) for k, v in described]))
    inner += [error_text(cut(asked.errors["q0"], limits.text))] if asked.errors.get("q0") else []
    actions = [
        execute(cut(label, limits.label), answer_data(asked.token, asked.interrupt_id, q0=str(i)))
        for i, (label, _) in enumerate(described)
    ]
    heading = str(question.get("header") or "The agent has a question")
    return card(_frame(asked, heading, inner, limits), actions)


def _question(asked: Asked, input_id: str, question: Json, limits: Limits) -> list[Json]:
    label = str(question.get("header") or "")
    prompt = cut(str(question.get("question", "")), limits.text)
    options = [o for o in question.get("options", []) if isinstance(o, dict)]
    element: Json
    if options:
        multi = bool(question.get("multi_select"))
        element = {
            "type": "Input.ChoiceSet",
            "id": input_id,
            "isMultiSelect": multi,
            "style": "expanded" if multi or len(options) <= MAX_BUTTONS else "compact",
            "isRequired": True,
            "errorMessage": "Choose an option.",
            "choices": [
                {"title": _option_title(option, limits), "value": str(i)}
                for i, option in enumerate(options)
            ],
        }
    else:
        element = {
            "type": "Input.Text",
            "id": input_id,
            "isMultiline": True,
            "maxLength": MAX_FREE_TEXT,
            "isRequired": True,
            "errorMessage": "Type an answer.",
            "placeholder": "Your answer",
        }
    if asked.values.get(input_id):
        element["value"] = asked.values[input_id]
    heading = [text(cut(label, limits.label), weight="bolder")] if label else []
    return [*heading, text(prompt), *_with_error(asked, input_id, element, limits)]


def _option_title(option: Json, limits: Limits) -> str:
    label = str(option.get("label", ""))
    description = str(option.get("description", ""))
    return cut(f"{label} ({description})" if description else label, limits.label)


def _approval(asked: Asked, limits: Limits) -> Json:
    payload = asked.payload
    risk = str(payload.get("risk", "medium"))
    arguments = payload.get("arguments") or {}
    inner: list[Json] = [
        text(cut(str(payload.get("summary", "")), limits.text)),
        text(f"Risk: {risk.upper()}", weight="bolder", color=RISK_COLOR.get(risk, "default")),
    ]
    if isinstance(arguments, dict) and arguments:
        inner.append(
            facts([(cut(str(k), limits.label), _shown(v, limits)) for k, v in arguments.items()])
        )
    comment: Json = {
        "type": "Input.Text",
        "id": "comment",
        "label": "Comment (optional)",
        "isMultiline": True,
        "maxLength": 1000,
    }
    if asked.values.get("comment"):
        comment["value"] = asked.values["comment"]
    inner += _with_error(asked, "comment", comment, limits)
    actions = [
        execute(
            "Approve",
            answer_data(asked.token, asked.interrupt_id, kind="approval", decision="approve"),
            style="positive",
        ),
        execute(
            "Reject",
            answer_data(asked.token, asked.interrupt_id, kind="approval", decision="reject"),
            style="destructive",
        ),
    ]
    heading = f"Approval needed: {payload.get('action', '')}"
    return card(_frame(asked, heading, inner, limits), actions)


def _form(asked: Asked, limits: Limits) -> Json:
    message = str(asked.payload.get("message") or "")
    inner = [text(cut(message, limits.text))] if message else []
    inner += form_inputs(asked.payload, limits, errors=asked.errors, values=asked.values)
    heading = str(asked.payload.get("title") or "The agent asks you to fill in a form")
    data = answer_data(asked.token, asked.interrupt_id)
    return card(_frame(asked, heading, inner, limits), [execute("Send", data, style="positive")])


def _schema(asked: Asked, limits: Limits) -> Json:
    """A deployment's own interaction: its payload as facts, its response fields as inputs."""
    shown = [(cut(str(k), limits.label), _shown(v, limits)) for k, v in asked.payload.items()]
    inner: list[Json] = [facts(shown)] if shown else []
    schema = asked.response_schema or {}
    required = set(schema.get("required", []))
    for name, spec in (schema.get("properties") or {}).items():
        input_id = f"f_{name}"
        element = _schema_input(input_id, spec, schema.get("$defs", {}), limits)
        element["label"] = cut(str(spec.get("title") or name), limits.label)
        element["isRequired"] = name in required
        if asked.values.get(input_id):
            element["value"] = asked.values[input_id]
        inner += _with_error(asked, input_id, element, limits)
    heading = asked.name.replace("_", " ").capitalize()
    body = _frame(asked, heading, inner, limits)
    return card(
        body,
        [execute("Send answer", answer_data(asked.token, asked.interrupt_id), style="positive")],
    )


def _schema_input(input_id: str, spec: Json, defs: Json, limits: Limits) -> Json:
    spec = _resolved(spec, defs)
    kind = spec.get("type")
    if "enum" in spec or (kind == "array" and "enum" in _resolved(spec.get("items", {}), defs)):
        multi = kind == "array"
        values = spec["enum"] if not multi else _resolved(spec["items"], defs)["enum"]
        return {
            "type": "Input.ChoiceSet",
            "id": input_id,
            "isMultiSelect": multi,
            "style": "expanded" if multi else "compact",
            "choices": [{"title": cut(str(v), limits.label), "value": str(v)} for v in values],
        }
    if kind == "boolean":
        return {
            "type": "Input.Toggle",
            "id": input_id,
            "title": "Yes",
            "valueOn": "true",
            "valueOff": "false",
        }
    if kind in ("integer", "number"):
        return {"type": "Input.Number", "id": input_id}
    element: Json = {"type": "Input.Text", "id": input_id, "isMultiline": True}
    if isinstance(spec.get("maxLength"), int):
        element["maxLength"] = spec["maxLength"]
    return element


def _resolved(spec: Any, defs: Json) -> Json:
    """A property's schema with ``$ref`` and single-branch ``anyOf`` (Optional) unwrapped."""
    if not isinstance(spec, dict):
        return {}
    ref = spec.get("$ref")
    if isinstance(ref, str):
        return _resolved(defs.get(ref.rsplit("/", 1)[-1], {}), defs)
    branches = [b for b in spec.get("anyOf", []) if isinstance(b, dict) and b.get("type") != "null"]
    if len(branches) == 1:
        return {**spec, **_resolved(branches[0], defs)}
    return spec


def _shown(value: Any, limits: Limits) -> str:
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return cut(raw, limits.label)
