"""Submitted card data -> the answer ``RunService.redeem`` validates, and back.

Only reshaping: whether the answer is acceptable is decided in ``bot/``.
Anything that does not map cleanly is passed on as is, so validation (not
this module) is what refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from adapters.teams._form_card import field_id, form_answer, properties
from bot.contract.edits import edit_schema
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
)

Json = dict[str, Any]


def answer_from(payload: Payload, data: Mapping[str, Any], *, schema: Json | None = None) -> Json:
    """The answer in the shape the interaction's response schema expects."""
    match payload:
        case AskUserPayload():
            return _ask_user(payload, data)
        case ApprovalPayload():
            return _approval(payload, data)
        case FormToolPayload():
            return form_answer(payload, data)
        case OtherPayload():
            return {
                key[2:]: _split(value) if _is_list_field(schema or {}, key[2:]) else value
                for key, value in data.items()
                if key.startswith("f_") and value not in ("", None)
            }
        case _:
            assert_never(payload)


def edit_input(index: int) -> str:
    """The id of an approval card's input for its ``index``-th argument."""
    return f"a{index}"


def decision_answer(data: Mapping[str, Any]) -> Json:
    """An approval's answer other than an edit, which needs nothing from the question."""
    answer: Json = {"decision": data.get("decision", ""), "comment": str(data.get("comment") or "")}
    if answer["decision"] == "respond":
        answer["message"] = str(data.get("message") or "")
    return answer


def _approval(payload: ApprovalPayload, data: Mapping[str, Any]) -> Json:
    answer = decision_answer(data)
    if answer["decision"] == "edit":
        # The arguments as asked, each shown input's text over its value. Teams sends no
        # value for an input left empty, so a drawn input (``edits``) absent was emptied.
        arguments = dict(payload.arguments)
        drawn = str(data.get("edits") or "").split(",")
        for index, name in enumerate(edit_schema(payload).get("properties", {})):
            given = data.get(edit_input(index))
            if given is not None:
                arguments[name] = given
            elif edit_input(index) in drawn:
                arguments[name] = ""
        answer["arguments"] = arguments
    return answer


def _ask_user(payload: AskUserPayload, data: Mapping[str, Any]) -> Json:
    answers: Json = {}
    for index, question in enumerate(payload.questions):
        raw = data.get(f"q{index}")
        labels = [option.label for option in question.options]
        text = "" if raw is None else str(raw)
        if not labels:
            answers[question.question] = text
        elif question.multi_select:
            answers[question.question] = [_label(labels, part) for part in _split(text)]
        else:
            answers[question.question] = _label(labels, text) if text else ""
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


def errors_for(payload: Payload, fields: Mapping[str, str]) -> dict[str, str]:
    """Validation problems keyed by the input they belong beside ("" for the card)."""
    placed: dict[str, str] = {}
    for where, problem in fields.items():
        key = _input_of(payload, where, problem)
        placed[key] = f"{placed[key]} {problem}" if key in placed else problem
    return placed


def _input_of(payload: Payload, where: str, problem: str) -> str:
    """The input a problem with ``where`` belongs beside: "" for the card as a whole."""
    match payload:
        case ApprovalPayload():
            if where in ("comment", "message"):
                return where
            if where.startswith("arguments."):
                edited = list(edit_schema(payload).get("properties", {}))
                argument = where.removeprefix("arguments.")
                return edit_input(edited.index(argument)) if argument in edited else ""
            return ""
        case FormToolPayload():
            return field_id(where) if where in properties(payload) else ""
        case AskUserPayload(questions=questions):
            for index, question in enumerate(questions):
                if repr(question.header or question.question) in problem:
                    return f"q{index}"
            return ""
        case OtherPayload():
            return f"f_{where.split('.')[0]}" if where.split(".")[0] != "answer" else ""
        case _:
            assert_never(payload)


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
