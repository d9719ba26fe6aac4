"""Modals built from a question's response schema, and answers read back out of them.

Pure functions, no I/O. ``ask_user`` gets one input per question (free
text, radio buttons, checkboxes, or a select past ten options); any other
interaction gets one input per top-level field of its response schema; a
``form`` gets one input per property of the schema it carries (``_forms``); a
rejected ``approval`` gets an optional comment. The token rides in
``private_metadata``; Slack returns it with the submission, signed. A
choice's option carries its index, never its text: Slack allows 150
characters in an option's value, and an option is read back to exactly
the text asked. Texts are shown through ``bot.display`` (plain_text:
hidden controls made visible), then clipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from adapters.slack import _forms
from adapters.slack import _limits as L
from adapters.slack._limits import clip
from adapters.slack._submissions import within_reach
from bot.contract.decisions import MAX_MESSAGE
from bot.contract.edits import edit_schema, field_text, unlisted
from bot.contract.form_schema import is_json_field
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserItem,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
)
from bot.display import display

FormKind = Literal["ask", "schema", "reject", "form", "edit", "respond"]
_KINDS = ("ask", "schema", "reject", "form", "edit", "respond")
ANSWER = "answer"  # every input's action_id
MAX_FREE_TEXT = 2000


@dataclass(frozen=True, slots=True)
class Metadata:
    """What a modal carries: the token and where its question was posted."""

    token: str
    kind: FormKind
    channel: str
    message_ts: str
    thread: str

    def dump(self) -> str:
        data = {
            "t": self.token,
            "k": self.kind,
            "c": self.channel,
            "m": self.message_ts,
            "h": self.thread,
        }
        return clip(json.dumps(data, separators=(",", ":")), L.PRIVATE_METADATA)

    @classmethod
    def parse(cls, raw: str) -> Metadata | None:
        try:
            data = json.loads(raw)
        except (ValueError, TypeError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("k") not in _KINDS:
            return None
        fields = [data.get(key) for key in ("t", "c", "m", "h")]
        if not all(isinstance(value, str) for value in fields):
            return None
        return cls(str(data["t"]), data["k"], str(data["c"]), str(data["m"]), str(data["h"]))


def form_kind(payload: Payload) -> FormKind:
    """Which modal answers ``payload``'s question: its form, its questions, or the inputs of
    the interaction's response schema."""
    match payload:
        case FormToolPayload():
            return "form"
        case AskUserPayload():
            return "ask"
        case ApprovalPayload() | OtherPayload():
            return "schema"
        case _:
            assert_never(payload)


def answer_modal(payload: Payload, schema: Mapping[str, Any], metadata: Metadata) -> dict[str, Any]:
    """The "Answer…" modal: inputs for the question, submit sends them back."""
    if metadata.kind == "form" and isinstance(payload, FormToolPayload):
        inputs = _forms.form_inputs(payload)
    elif metadata.kind == "ask":
        inputs = [_question_input(i, q) for i, q in enumerate(_questions(payload))]
    else:
        inputs = _schema_inputs(schema)
    room = L.MODAL_BLOCKS - 2
    blocks = inputs[:room]
    if len(inputs) > room:
        blocks.append(_note(f"…and {len(inputs) - room} more fields that do not fit a form."))
    if not blocks:
        blocks.append(_note("This question has nothing to fill in; submit to answer."))
    title = "Approval" if isinstance(payload, ApprovalPayload) else "Answer the question"
    if metadata.kind == "form" and isinstance(payload, FormToolPayload):
        title = _shown(payload.title or "Fill in the form")
    return _modal(title, "Send answer", blocks, metadata)


def reject_modal(metadata: Metadata) -> dict[str, Any]:
    """Reject, with an optional comment the agent reads."""
    blocks = [
        _note("*Rejected.* The agent will not perform the action. Add a comment if you like."),
        {
            "type": "input",
            "block_id": "comment",
            "optional": True,
            "label": _plain("Comment (optional)"),
            "element": {
                "type": "plain_text_input",
                "action_id": ANSWER,
                "multiline": True,
                "max_length": 1000,
            },
        },
    ]
    return _modal("Reject", "Reject", blocks, metadata)


def edit_modal(payload: ApprovalPayload, metadata: Metadata) -> dict[str, Any]:
    """Approve with changes: one input per argument, prefilled with the value asked.

    An argument whose text cannot be shown as typed (longer than an input holds, or with
    hidden controls, which an input would hide), or that the question's schema does not
    list, gets no input and keeps its value; the modal names them."""
    blocks = [_note("*Approve with changes.* The action runs with the arguments below.")]
    original = payload.arguments
    kept: list[str] = unlisted(payload)
    for name, spec in edit_schema(payload).get("properties", {}).items():
        if len(blocks) >= L.MODAL_BLOCKS - 1:
            kept.append(name)
            continue
        current = original.get(name, spec.get("default") if isinstance(spec, Mapping) else None)
        element = _edit_element(spec if isinstance(spec, Mapping) else {}, current)
        if element is None:
            kept.append(name)
            continue
        block: dict[str, Any] = {
            "type": "input",
            "block_id": _edit_block(name),
            "optional": True,
            "label": _plain(clip(_shown(name), L.INPUT_LABEL)),
            "element": element,
        }
        if isinstance(spec, Mapping) and is_json_field(spec):
            block["hint"] = _plain("JSON")
        blocks.append(block)
    if kept:
        # A mrkdwn note: the agent's names shown as typed, no mention or link.
        names = ", ".join(display(n, markup="slack") for n in kept)
        blocks.append(_note(clip(f"Kept as asked (too long or not editable here): {names}", 2000)))
    return _modal("Approve with changes", "Approve", blocks, metadata)


def _edit_element(spec: Mapping[str, Any], current: Any) -> dict[str, Any] | None:
    choices = _schema_choices(spec)
    if choices and len(choices) <= L.SELECT_OPTIONS:
        options = [_option(i, c, described=False) for i, c in enumerate(choices)]
        if spec.get("type") == "array":
            picked = [options[choices.index(c)] for c in current or () if c in choices]
            many: dict[str, Any] = {"type": "multi_static_select", "action_id": ANSWER}
            return {**many, "options": options, **({"initial_options": picked} if picked else {})}
        element: dict[str, Any] = {"type": "static_select", "action_id": ANSWER, "options": options}
        if current in choices:
            element["initial_option"] = options[choices.index(current)]
        return element
    text = "" if current is None else field_text(current)
    if len(text) > L.TEXT_INPUT_MAX or _shown(text) != text:
        return None
    element = {
        "type": "plain_text_input",
        "action_id": ANSWER,
        "multiline": is_json_field(spec) or "\n" in text,
        "max_length": L.TEXT_INPUT_MAX,
    }
    if text:
        element["initial_value"] = text
    return element


def respond_modal(metadata: Metadata) -> dict[str, Any]:
    """Answer in the action's place: the agent reads the message; the action does not run."""
    blocks = [
        _note("*Respond instead.* The action does not run; the agent reads your message."),
        {
            "type": "input",
            "block_id": "message",
            "label": _plain("Message to the agent"),
            "element": {
                "type": "plain_text_input",
                "action_id": ANSWER,
                "multiline": True,
                "max_length": MAX_MESSAGE,
            },
        },
    ]
    return _modal("Respond", "Send", blocks, metadata)


def _edit_block(name: str) -> str:
    return clip(f"e:{name}", L.BLOCK_ID)


def _edit_answer(payload: ApprovalPayload, values: Mapping[str, Any]) -> dict[str, Any]:
    """The edited arguments as typed: each input's text (a choice's value), and the asked
    value for an argument the modal did not show; ``bot/`` checks and types them."""
    arguments = dict(payload.arguments)
    for name, spec in edit_schema(payload).get("properties", {}).items():
        block = values.get(_edit_block(name))
        if block is None:
            continue  # not shown: keeps its value
        value = _read(block.get(ANSWER, {}))
        choices = _schema_choices(spec) if isinstance(spec, Mapping) else []
        if choices:
            value = _chosen(choices, value)
        if value is None:
            arguments.pop(name, None)
        else:
            arguments[name] = value
    return {"decision": "edit", "arguments": arguments}


def answer_from_state(
    metadata: Metadata,
    payload: Payload,
    schema: Mapping[str, Any],
    values: Mapping[str, Any],
) -> dict[str, Any]:
    """The answer a submitted modal gives, in the shape the response schema checks."""
    if metadata.kind == "reject":
        comment = _read(values.get("comment", {}).get(ANSWER, {}))
        return {"decision": "reject", "comment": comment if isinstance(comment, str) else ""}
    if metadata.kind == "edit":
        if isinstance(payload, ApprovalPayload):
            return _edit_answer(payload, values)
        return {"decision": "edit", "arguments": {}}  # no approval to edit: bot/ refuses it
    if metadata.kind == "respond":
        message = _read(values.get("message", {}).get(ANSWER, {}))
        return {"decision": "respond", "message": message if isinstance(message, str) else ""}
    if metadata.kind == "form":
        if isinstance(payload, FormToolPayload):
            return _forms.form_answer_from_state(payload, values)
        return {}
    if metadata.kind == "ask":
        answers: dict[str, Any] = {}
        for i, question in enumerate(_questions(payload)):
            value = _read(values.get(f"q{i}", {}).get(ANSWER, {}))
            labels = [option.label for option in question.options]
            if labels:
                value = _chosen(labels, value)
            answers[question.question] = "" if value is None else value
        return {"answers": answers}
    answer: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for field, spec in properties.items():
        value = _read(values.get(_field_block(field), {}).get(ANSWER, {}))
        if value is None or value == "":
            continue
        spec = spec if isinstance(spec, Mapping) else {}
        choices = _schema_choices(spec)
        if choices:
            value = _chosen(choices, value)
        answer[field] = _typed(value, spec)
    return answer


def errors_for(
    metadata: Metadata,
    payload: Payload,
    schema: Mapping[str, Any],
    fields: Mapping[str, str],
) -> dict[str, str]:
    """Validation problems keyed by the input block they belong under."""
    errors: dict[str, str] = {}
    questions = _questions(payload)
    names = list(schema.get("properties") or {})
    if metadata.kind == "form" and isinstance(payload, FormToolPayload):
        names = list(_forms.properties(payload))
    if metadata.kind == "edit" and isinstance(payload, ApprovalPayload):
        names = list(edit_schema(payload).get("properties", {}))
    for where, problem in fields.items():
        block = _block_for(metadata, questions, names, where, problem)
        errors.setdefault(block, clip(_shown(problem), 300))
    return errors


# -- inputs -------------------------------------------------------------------


def _question_input(index: int, question: AskUserItem) -> dict[str, Any]:
    text = _shown(question.question)
    header = _shown(question.header)
    options = [(option.label, option.description) for option in question.options]
    multi = question.multi_select
    if not options:
        element: dict[str, Any] = {
            "type": "plain_text_input",
            "action_id": ANSWER,
            "multiline": True,
            "max_length": MAX_FREE_TEXT,
        }
    else:
        element = _choice(options, multi=multi)
    block: dict[str, Any] = {
        "type": "input",
        "block_id": f"q{index}",
        "label": _plain(clip(header or text, L.INPUT_LABEL)),
        "element": element,
    }
    if header:
        block["hint"] = _plain(clip(text, L.INPUT_HINT))
    return block


def _choice(options: list[tuple[str, str]], *, multi: bool) -> dict[str, Any]:
    """Radio buttons or checkboxes for a few (label, description) options, else a select."""
    few = len(options) <= L.CHOICE_OPTIONS
    shown = options[: L.SELECT_OPTIONS]
    items = [_option(i, label, text, described=few) for i, (label, text) in enumerate(shown)]
    if few:
        return {
            "type": "checkboxes" if multi else "radio_buttons",
            "action_id": ANSWER,
            "options": items,
        }
    element = {
        "type": "multi_static_select" if multi else "static_select",
        "action_id": ANSWER,
        "placeholder": _plain("Choose…"),
        "options": items,
    }
    return element


def _option(index: int, label: str, description: str = "", *, described: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "text": _plain(clip(_shown(label), L.OPTION_TEXT)),
        "value": str(index),
    }
    shown = _shown(description)
    if described and shown:
        item["description"] = _plain(clip(shown, L.OPTION_DESCRIPTION))
    return item


def _chosen(labels: list[str], value: Any) -> Any:
    """The texts an option index (or a list of them) stands for; anything else as sent,
    for validation to refuse."""
    if isinstance(value, list):
        return [_chosen(labels, v) for v in value]
    text = str(value)
    if text.isascii() and text.isdigit() and len(text) <= 6 and int(text) < len(labels):
        return labels[int(text)]
    return value


def _schema_choices(spec: Mapping[str, Any]) -> list[str]:
    """The enum a schema field's choices are drawn from (its own, or its items')."""
    enum = spec.get("enum")
    raw_items = spec.get("items")
    items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
    if isinstance(enum, list) and enum:
        return [str(v) for v in enum]
    if spec.get("type") == "array" and isinstance(items.get("enum"), list):
        return [str(v) for v in items["enum"]]
    return []


def _schema_inputs(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required") or [])
    blocks = []
    for field, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, Mapping) else {}
        element = _schema_element(spec)
        blocks.append(_forms.input_block(field, spec, element, optional=field not in required))
    return blocks


def _schema_element(spec: Mapping[str, Any]) -> dict[str, Any]:
    kind = spec.get("type")
    enum = spec.get("enum")
    raw_items = spec.get("items")
    items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
    if isinstance(enum, list) and enum:
        return _choice([(str(v), "") for v in enum], multi=False)
    if kind == "array" and isinstance(items.get("enum"), list):
        return _choice([(str(v), "") for v in items["enum"]], multi=True)
    if kind == "boolean":
        return {
            "type": "checkboxes",
            "action_id": ANSWER,
            "options": [{"text": _plain("Yes"), "value": "true"}],
        }
    if kind in ("integer", "number"):
        return {"type": "number_input", "action_id": ANSWER, "is_decimal_allowed": kind == "number"}
    limit = spec.get("maxLength")
    max_length = min(int(limit), L.TEXT_INPUT_MAX) if isinstance(limit, int) else L.TEXT_INPUT_MAX
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "action_id": ANSWER,
        "max_length": max_length,
    }
    element["multiline"] = kind != "string" or max_length > 150
    return element


def _read(state: Mapping[str, Any]) -> Any:
    """One input's value out of ``view.state.values``, whatever its element type."""
    kind = state.get("type")
    if kind in ("radio_buttons", "static_select"):
        selected = state.get("selected_option") or {}
        return selected.get("value") if isinstance(selected, Mapping) else None
    if kind in ("checkboxes", "multi_static_select"):
        chosen = state.get("selected_options") or []
        return [o.get("value") for o in chosen if isinstance(o, Mapping)]
    return state.get("value")


def _typed(value: Any, spec: Mapping[str, Any]) -> Any:
    kind = spec.get("type")
    if kind == "boolean":
        return bool(value)
    if kind in ("integer", "number") and isinstance(value, str):
        try:
            return int(value) if kind == "integer" else float(value)
        except ValueError:
            return value  # the schema says which field is wrong
    if kind in ("object", None) and isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _block_for(
    metadata: Metadata,
    questions: list[AskUserItem],
    properties: list[str],
    where: str,
    problem: str,
) -> str:
    if metadata.kind == "reject":
        return "comment"
    if metadata.kind == "respond":
        return "message"
    if metadata.kind == "edit":
        # "arguments.env" under env's input; a problem of the whole edit under the first.
        argument = where.removeprefix("arguments.")
        shown = properties or [argument]
        return _edit_block(argument if argument in shown else shown[0])
    if metadata.kind in ("schema", "form"):
        field = where.split(".")[0]
        # A whole-answer problem goes under the first field.
        return _field_block(field if field in properties or not properties else properties[0])
    # ask_user's checks name the question by header (or text) in quotes.
    for i, question in enumerate(questions):
        for name in (question.header, question.question):
            if name and re.search(re.escape(repr(str(name))), problem):
                return f"q{i}"
    return "q0"


def _field_block(field: str) -> str:
    return _forms.field_block(field)


def _questions(payload: Payload) -> list[AskUserItem]:
    return list(payload.questions) if isinstance(payload, AskUserPayload) else []


def _modal(
    title: str, submit: str, blocks: list[dict[str, Any]], metadata: Metadata
) -> dict[str, Any]:
    """The view, within what the Slack door reads back when it is submitted (``_submissions``)."""
    return within_reach(
        {
            "type": "modal",
            "callback_id": "hitl_answer",
            "title": _plain(clip(title, L.MODAL_TITLE)),
            "submit": _plain(clip(submit, L.MODAL_BUTTON)),
            "close": _plain("Cancel"),
            "private_metadata": metadata.dump(),
            "blocks": blocks,
        }
    )


def _note(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, L.SECTION_TEXT)}}


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}


def _shown(text: object) -> str:
    return display(text, markup="plain")
