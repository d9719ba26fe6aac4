"""Submitted card data -> the answer ``RunService.redeem`` validates, and back.

Only reshaping: whether the answer is acceptable is decided in ``bot/``.
Anything that does not map cleanly is passed on as is, so validation (not
this module) is what refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.teams._form_card import field_id, form_answer, properties

Json = dict[str, Any]


def answer_from(
    name: str, payload: Json, data: Mapping[str, Any], *, schema: Json | None = None
) -> Json:
    """The answer in the shape the interaction's response schema expects."""
    if name == "ask_user":
        return _ask_user(payload, data)
    if name == "approval":
        return {"decision": data.get("decision", ""), "comment": str(data.get("comment") or "")}
    if name == "form":
        return form_answer(payload, data)
    return {
        key[2:]: _split(value) if _is_list_field(schema or {}, key[2:]) else value
        for key, value in data.items()
        if key.startswith("f_") and value not in ("", None)
    }


def _ask_user(payload: Json, data: Mapping[str, Any]) -> Json:
    answers: Json = {}
    for index, question in enumerate(payload.get("questions", [])):
        raw = data.get(f"q{index}")
        labels = [str(o.get("label", "")) for o in question.get("options", [])]
        text = "" if raw is None else str(raw)
        if not labels:
            answers[question["question"]] = text
        elif question.get("multi_select"):
            answers[question["question"]] = [_label(labels, part) for part in _split(text)]
        else:
            answers[question["question"]] = _label(labels, text) if text else ""
    return {"answers": answers}


def _label(labels: list[str], index: str) -> str:
    """Option index -> its label; anything else stays as sent, for validation to refuse."""
    # ASCII digits only ("²".isdigit() is true), and short enough for int().
    if index.isascii() and index.isdigit() and len(index) <= 6 and int(index) < len(labels):
        return labels[int(index)]
    return index


def _split(value: Any) -> list[str]:
    # Teams joins a multi-select's values with commas.
    return [part for part in str(value).split(",") if part] if value not in (None, "") else []


def _is_list_field(schema: Json, name: str) -> bool:
    spec = (schema.get("properties") or {}).get(name) or {}
    branches = [spec, *spec.get("anyOf", [])]
    return any(isinstance(b, dict) and b.get("type") == "array" for b in branches)


def errors_for(name: str, payload: Json, fields: Mapping[str, str]) -> dict[str, str]:
    """Validation problems keyed by the input they belong beside ("" for the card)."""
    placed: dict[str, str] = {}
    questions = payload.get("questions", []) if name == "ask_user" else []
    named = properties(payload) if name == "form" else {}
    for where, problem in fields.items():
        key = ""
        if name == "approval" and where == "comment":
            key = "comment"
        elif name == "form":
            key = field_id(where) if where in named else ""
        elif name not in ("ask_user", "approval") and where.split(".")[0] != "answer":
            key = f"f_{where.split('.')[0]}"
        for index, question in enumerate(questions):
            if repr(question.get("header") or question.get("question")) in problem:
                key = f"q{index}"
                break
        placed[key] = f"{placed[key]} {problem}" if key in placed else problem
    return placed


def values_from(data: Mapping[str, Any]) -> dict[str, str]:
    """What the person had entered, to keep in the inputs of a card drawn again."""
    return {
        key: str(value)
        for key, value in data.items()
        if (key.startswith(("q", "f_")) or key == "comment") and isinstance(value, str | int)
    }
