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
from functools import partial
from typing import Any, assert_never

from adapters.teams._answers import edit_input
from adapters.teams._card_kit import (
    Json,
    Limits,
    answer_data,
    card,
    choice_style,
    cut,
    error_text,
    execute,
    facts,
    fit,
    left_out,
    md,
    note,
    plain,
    subtle,
    text,
    title,
)
from adapters.teams._form_card import form_inputs, kept_fields, properties
from bot.contract.decisions import MAX_MESSAGE
from bot.contract.edits import edit_schema, field_text, unlisted
from bot.contract.form_schema import is_json_field
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserItem,
    AskUserOption,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    allowed,
)
from bot.questions.records import Question
from bot.service.delivering.messages import expires_text, level_text

# A single choice shows as buttons up to this many options (Teams shows six actions).
MAX_BUTTONS = 5
MAX_FREE_TEXT = 2000
RISK_COLOR = {"high": "attention", "medium": "warning", "low": "good"}
ARGUMENTS_LEFT_OUT = "Ask whoever requested it what they are before you approve."
PAYLOAD_LEFT_OUT = "Ask whoever asked what they are before you answer."


@dataclass(frozen=True, slots=True)
class CardContext:
    """What a question's card shows besides the question itself: the token its buttons
    carry, who it was asked for, who may answer, and what a redraw keeps.

    ``question`` is the bridge's record of the open question, drawn when it is
    posted and again (a vote counted, an answer refused, an admin's redraw).
    """

    question: Question
    token: str
    asked_for: str
    who_may_answer: str
    response_schema: Json | None = None
    # Input id -> problem ("" for the card as a whole), and the values to keep.
    errors: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)
    # Under a quorum, the tally so far ("1 of 2 approved: @bo"); "" otherwise.
    tally: str = ""


def question_card(asked: CardContext) -> Json:
    """The card for any interaction, within Teams' size limit."""
    payload = asked.question.payload
    match payload:
        case AskUserPayload():
            return fit(lambda limits, _shown: _ask_user(asked, payload, limits))
        case ApprovalPayload():
            return fit(
                lambda limits, shown: _approval(asked, payload, limits, shown),
                items=len(payload.arguments),
            )
        case FormToolPayload():
            return fit(
                lambda limits, shown: _form(asked, payload, limits, shown),
                items=len(properties(payload)),
            )
        case OtherPayload(values=values):
            return fit(
                lambda limits, shown: _schema(asked, values, limits, shown), items=len(values)
            )
        case _:
            assert_never(payload)


def _frame(asked: CardContext, heading: str, inner: list[Json], limits: Limits) -> list[Json]:
    """``heading`` (already shown) above ``inner``, and the lines every question card ends with."""
    body = [title(cut(heading, limits.label))]
    general = asked.errors.get("")
    if general:
        body.append(text(md(general, limits.text), color="attention"))
    body += inner
    # Names (who asked, who may answer) and a tally's voters come from outside.
    who = f"Asked for {asked.asked_for}. " if asked.asked_for else ""
    footer = f"{who}{asked.who_may_answer} {expires_text(asked.question.expires_at)}"
    body.append(subtle(md(footer, limits.text)))
    if asked.tally:
        body.append(subtle(md(asked.tally, limits.text)))
    if asked.question.level:
        body.append(subtle(level_text(asked.question.level)))
    return body


def _with_error(asked: CardContext, input_id: str, element: Json, limits: Limits) -> list[Json]:
    problem = asked.errors.get(input_id)
    return [element, error_text(md(problem, limits.text))] if problem else [element]


def _kept_value(asked: CardContext, input_id: str, element: Json, limits: Limits) -> None:
    """What the person had entered, back in its input: their own words, only clipped."""
    if asked.values.get(input_id):
        element["value"] = cut(asked.values[input_id], limits.text)


def _ask_user(asked: CardContext, payload: AskUserPayload, limits: Limits) -> Json:
    questions = payload.questions
    data = answer_data(asked.token, asked.question.interrupt_id)
    only = questions[0] if len(questions) == 1 else None
    if only and not only.multi_select and 0 < len(only.options) <= MAX_BUTTONS:
        return _buttons(asked, only, limits)
    inner: list[Json] = []
    for index, question in enumerate(questions):
        inner += _question(asked, f"q{index}", question, limits)
    heading = "The agent has a question" if len(questions) == 1 else "The agent has questions"
    body = _frame(asked, heading, inner, limits)
    return card(body, [execute("Send answer", data, style="positive")])


def _buttons(asked: CardContext, question: AskUserItem, limits: Limits) -> Json:
    """One question with a few options and nothing to type: the options are the buttons."""
    inner = [text(md(question.question, limits.text))]
    described = [(o.label, o.description) for o in question.options]
    if any(description for _, description in described):
        inner.append(facts([(md(k, limits.label), md(v, limits.label)) for k, v in described]))
    if asked.errors.get("q0"):
        inner.append(error_text(md(asked.errors["q0"], limits.text)))
    actions = [
        execute(
            plain(label, limits.label),
            answer_data(asked.token, asked.question.interrupt_id, q0=str(i)),
        )
        for i, (label, _) in enumerate(described)
    ]
    header = question.header
    heading = md(header, limits.label) if header else "The agent has a question"
    return card(_frame(asked, heading, inner, limits), actions)


def _question(
    asked: CardContext, input_id: str, question: AskUserItem, limits: Limits
) -> list[Json]:
    """The question as its input's label (read out with it, starred as required), under its
    header when it has one."""
    header = question.header
    options = question.options
    element: Json
    if options:
        multi = question.multi_select
        element = {
            "type": "Input.ChoiceSet",
            "id": input_id,
            "isMultiSelect": multi,
            "style": choice_style(len(options), multi=multi),
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
            "errorMessage": "Type an answer.",
            "placeholder": "Your answer",
        }
    element["label"] = plain(question.question, limits.text)
    element["isRequired"] = True
    _kept_value(asked, input_id, element, limits)
    heading = [text(md(header, limits.label), weight="bolder")] if header else []
    return [*heading, *_with_error(asked, input_id, element, limits)]


def _option_title(option: AskUserOption, limits: Limits) -> str:
    label, description = option.label, option.description
    return plain(f"{label} ({description})" if description else label, limits.label)


def _approval(
    asked: CardContext, payload: ApprovalPayload, limits: Limits, shown: int | None
) -> Json:
    risk = payload.risk
    arguments = payload.arguments
    inner: list[Json] = [
        text(md(payload.summary, limits.text)),
        text(f"Risk: {md(risk.upper())}", weight="bolder", color=RISK_COLOR.get(risk, "default")),
    ]
    if arguments:
        inner += _facts_of(arguments, limits, shown, what="arguments", then=ARGUMENTS_LEFT_OUT)
    comment: Json = {
        "type": "Input.Text",
        "id": "comment",
        "label": "Comment (optional)",
        "isMultiline": True,
        "maxLength": 1000,
    }
    _kept_value(asked, "comment", comment, limits)
    inner += _with_error(asked, "comment", comment, limits)
    allows = allowed(payload)
    drawn: list[str] = []
    if "edit" in allows:
        edits, drawn = _edit_inputs(asked, payload, limits, shown)
        inner += edits
    if "respond" in allows:
        message: Json = {
            "type": "Input.Text",
            "id": "message",
            "label": "Or answer instead of running it (Respond)",
            "isMultiline": True,
            "maxLength": MAX_MESSAGE,
        }
        _kept_value(asked, "message", message, limits)
        inner += _with_error(asked, "message", message, limits)
    data = partial(answer_data, asked.token, asked.question.interrupt_id, kind="approval")
    actions = [
        execute("Approve", data(decision="approve"), style="positive"),
        execute("Reject", data(decision="reject"), style="destructive"),
    ]
    if "edit" in allows:
        # Teams sends nothing for an input left empty: naming the inputs drawn lets the
        # answer tell an emptied argument from one the card kept as asked.
        edit = data(decision="edit", edits=",".join(drawn))
        actions.append(execute("Approve with changes", edit))
    if "respond" in allows:
        actions.append(execute("Respond", data(decision="respond")))
    heading = f"Approval needed: {md(payload.action)}"
    return card(_frame(asked, heading, inner, limits), actions)


def _edit_inputs(
    asked: CardContext, payload: ApprovalPayload, limits: Limits, shown: int | None
) -> tuple[list[Json], list[str]]:
    """Approve with changes: one input per argument (``a<index>``), prefilled with its value;
    a choice for an enum; and the ids of the inputs drawn. An argument an input cannot hold
    as typed (too long, or hidden controls it would hide), or that the question's schema
    does not list, gets none and keeps its value (``answer_from``); the card names them."""
    original = payload.arguments
    inputs: list[Json] = [note("Approve with changes: edit the arguments below.")]
    kept: list[str] = unlisted(payload)
    drawn: list[str] = []
    for index, (name, spec) in enumerate(edit_schema(payload).get("properties", {}).items()):
        spec = spec if isinstance(spec, dict) else {}
        value = original.get(name)
        raw = "" if value is None else field_text(value)
        input_id = edit_input(index)
        if shown is not None and index >= shown:
            kept.append(name)  # the card's size: as many inputs as facts fit
            continue
        element: Json
        if isinstance(spec.get("enum"), list) and spec["enum"]:
            element = {
                "type": "Input.ChoiceSet",
                "id": input_id,
                "label": plain(name, limits.label),
                "choices": [
                    {"title": plain(c, limits.label), "value": str(c)} for c in spec["enum"]
                ],
                "value": raw,
            }
        elif len(raw) > limits.text or plain(raw) != raw:
            kept.append(name)
            continue
        else:
            element = {
                "type": "Input.Text",
                "id": input_id,
                "label": plain(name, limits.label) + (" (JSON)" if is_json_field(spec) else ""),
                "isMultiline": is_json_field(spec),
                "value": raw,
            }
        if asked.errors.get(input_id) and not asked.values.get(input_id):
            # Refused with nothing sent for it: the person emptied it, so it stays empty.
            element["value"] = ""
        _kept_value(asked, input_id, element, limits)
        inputs += _with_error(asked, input_id, element, limits)
        drawn.append(input_id)
    if kept:
        names = md(", ".join(kept), limits.text)
        inputs.append(note(f"Kept as asked (not editable here): {names}"))
    return inputs, drawn


def _facts_of(
    pairs: Mapping[Any, Any], limits: Limits, shown: int | None, *, what: str, then: str
) -> list[Json]:
    """Keys and values from outside as facts; the first ``shown`` when not all fit."""
    items = list(pairs.items())
    kept = items if shown is None else items[:shown]
    found = [facts([(md(k, limits.label), _value(v, limits)) for k, v in kept])] if kept else []
    if len(kept) < len(items):
        found.append(note(left_out(len(items) - len(kept), what, then)))
    return found


def _form(asked: CardContext, payload: FormToolPayload, limits: Limits, shown: int | None) -> Json:
    message = payload.message
    inner = [text(md(message, limits.text))] if message else []
    kept = kept_fields(payload, shown)
    inner += form_inputs(payload, limits, errors=asked.errors, values=asked.values, only=kept)
    data = answer_data(asked.token, asked.question.interrupt_id)
    actions = [execute("Send", data, style="positive")]
    required = set(payload.form_schema.get("required") or [])
    missing = [name for name in properties(payload) if name not in kept]
    if missing:
        needed = [name for name in missing if name in required]
        if needed:
            # Without them the answer can only be refused: no button to press in vain.
            then = (
                f"{len(needed)} of them must be answered, so this form cannot be answered "
                "in Teams: ask whoever asked to split it (an admin can close it with "
                f"`cancel {md(asked.question.interrupt_id)}`)."
            )
            actions = []
        else:
            then = "They are optional and are sent empty."
        inner.append(note(left_out(len(missing), "fields", then)))
    title_text = payload.title
    heading = md(title_text, limits.label) if title_text else "The agent asks you to fill in a form"
    return card(_frame(asked, heading, inner, limits), actions)


def _schema(
    asked: CardContext, values: Mapping[str, Any], limits: Limits, shown: int | None
) -> Json:
    """A deployment's own interaction: its payload as facts, its response fields as inputs."""
    inner = _facts_of(values, limits, shown, what="details", then=PAYLOAD_LEFT_OUT)
    schema = asked.response_schema or {}
    required = set(schema.get("required", []))
    for name, spec in (schema.get("properties") or {}).items():
        input_id = f"f_{name}"
        element = _schema_input(input_id, spec, schema.get("$defs", {}), limits)
        element["label"] = plain(spec.get("title") or name, limits.label)
        element["isRequired"] = name in required
        if name in required:
            element["errorMessage"] = "This field needs an answer."
        _kept_value(asked, input_id, element, limits)
        inner += _with_error(asked, input_id, element, limits)
    heading = md(asked.question.name.replace("_", " ").capitalize(), limits.label)
    body = _frame(asked, heading, inner, limits)
    return card(
        body,
        [
            execute(
                "Send answer",
                answer_data(asked.token, asked.question.interrupt_id),
                style="positive",
            )
        ],
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
            "style": choice_style(len(values), multi=multi),
            "choices": [{"title": plain(v, limits.label), "value": str(v)} for v in values],
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


def _value(value: Any, limits: Limits) -> str:
    """A value from outside as a fact: a string as it is, anything else as its JSON."""
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return md(raw, limits.label)
