"""Submitted card data -> the answer ``RunService.redeem`` validates, and back.

Only reshaping: whether the answer is acceptable is decided in ``bot/``.
Anything that does not map cleanly is passed on as is, so validation (not
this module) is what refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.teams._form_card import field_id, form_answer, properties
from bot.contract.edits import edit_schema

Json = dict[str, Any]


def answer_from(
    name: str, payload: Json, data: Mapping[str, Any], *, schema: Json | None = None
) -> Json:
    """The answer in the shape the interaction's response schema expects."""
    if name == "ask_user":
        return _ask_user(payload, data)
    if name == "approval":
        return _approval(payload, data)
    if name == "form":
        return form_answer(payload, data)
    return {
        key[2:]: _split(value) if _is_list_field(schema or {}, key[2:]) else value
        for key, value in data.items()
        if key.startswith("f_") and value not in ("", None)
    }


def edit_input(index: int) -> str:
    """The id of an approval card's input for its ``index``-th argument."""
    return f"a{index}"


def _approval(payload: Json, data: Mapping[str, Any]) -> Json:
    answer: Json = {"decision": data.get("decision", ""), "comment": str(data.get("comment") or "")}
    if answer["decision"] == "respond":
        answer["message"] = str(data.get("message") or "")
    if answer["decision"] == "edit":
        # The arguments as asked, each shown input's text over its value. Teams sends no
        # value for an input left empty, so a drawn input (``edits``) absent was emptied.
        original = payload.get("arguments")
        arguments = dict(original) if isinstance(original, dict) else {}
        drawn = str(data.get("edits") or "").split(",")
        for index, name in enumerate(edit_schema(payload).get("properties", {})):
            given = data.get(edit_input(index))
            if given is not None:
                arguments[name] = given
            elif edit_input(index) in drawn:
                arguments[name] = ""
        answer["arguments"] = arguments
    return answer


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
        if name == "approval" and where in ("comment", "message"):
            key = where
        elif name == "approval" and where.startswith("arguments."):
            edited = list(edit_schema(payload).get("properties", {}))
            argument = where.removeprefix("arguments.")
            key = edit_input(edited.index(argument)) if argument in edited else ""
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
        if (key.startswith(("q", "f_")) or key in ("comment", "message") or _edited(key))
        and isinstance(value, str | int)
    }


def _edited(key: str) -> bool:
    return key[:1] == "a" and key[1:].isascii() and key[1:].isdigit()
