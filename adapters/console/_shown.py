"""What the page reads as text, and what it sends back exactly as it was asked.

Every string the console serves that an agent, a model or a request wrote
leaves through ``shown`` (``bot.display`` with ``markup="plain"``): the page
puts text in with ``textContent``, so there is no markup to escape, but a
U+202E would still turn the rest of a line around there. The browser so
receives ``⟨U+202E⟩`` and never the control itself.

An answer, though, names what was asked (an approval's edit, its arguments):
``ask_user`` answers are keyed by the question's text and carry an option's
label; a form's are keyed by property name and carry enum values. Those go
to the page beside the shown text, untouched, under ``key`` (a question, a
property, an argument) and ``value`` / ``values`` / ``original`` (an option,
an enum, an argument's text), for the page to send back and never to show.
"""

from __future__ import annotations

from typing import Any, assert_never

from bot.contract.edits import edit_schema, field_text, unlisted
from bot.contract.form_schema import is_json_field
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
    allowed,
    payload_json,
)
from bot.display import display
from bot.human.capability import ASK_USER
from bot.interactions.approval import APPROVAL
from bot.interactions.form import FORM


def shown(value: Any) -> Any:
    """``value`` with every string in it, keys included, as the page may show it."""
    if isinstance(value, str):
        return display(value, markup="plain")
    if isinstance(value, dict):
        return {shown(key): shown(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown(item) for item in value]
    return value  # numbers, booleans, None: nothing to hide


def page_payload(payload: Payload) -> dict[str, Any]:
    """``payload`` shown, with the originals an answer to it must name beside the text."""
    # An unknown interaction's answer is typed as JSON by the person; an approval's
    # names its arguments only when edited: those three need originals.
    page: dict[str, Any] = shown(payload_json(payload))
    match payload:
        case AskUserPayload():
            _ask_user_originals(payload, page)
        case FormToolPayload():
            _form_originals(payload, page)
        case ApprovalPayload():
            # ``allow`` itself is in the payload whenever it allows more than approve and reject.
            if "edit" in allowed(payload):
                page["edit_fields"] = _edit_fields(payload)
                # Arguments the question's schema does not list: shown, kept as asked, never sent.
                page["edit_kept"] = [shown(name) for name in unlisted(payload)]
        case OtherPayload():
            pass
        case _:
            assert_never(payload)
    return page


def page_kind(payload: Payload) -> str:
    """Which form the page draws: the three it knows, or a generic JSON one."""
    match payload:
        case AskUserPayload():
            return ASK_USER
        case ApprovalPayload():
            return APPROVAL
        case FormToolPayload():
            return FORM
        case OtherPayload():
            return "other"
        case _:
            assert_never(payload)


def _edit_fields(payload: ApprovalPayload) -> list[dict[str, Any]]:
    """One input per argument: its name and value shown, and beside them the name and the
    value's text as asked (``key``, ``original``), which the page sends back for an input
    left as it was, so an untouched argument is never changed by being shown."""
    arguments = payload.arguments
    fields = []
    for key, spec in edit_schema(payload).get("properties", {}).items():
        spec = spec if isinstance(spec, dict) else {}
        value = arguments.get(key, spec.get("default"))
        original = "" if value is None else field_text(value)
        field: dict[str, Any] = {
            "key": key,
            "label": shown(key),
            "text": shown(original),
            "original": original,
            "json": is_json_field(spec) or not isinstance(value, str | int | float | None),
        }
        choices = spec.get("enum")
        if isinstance(choices, list) and choices:
            field["choices"] = [{"text": shown(str(c)), "value": str(c)} for c in choices]
        fields.append(field)
    return fields


def _ask_user_originals(payload: AskUserPayload, page: dict[str, Any]) -> None:
    for item, shown_item in zip(payload.questions, page["questions"], strict=True):
        shown_item["key"] = item.question
        for option, shown_option in zip(item.options, shown_item["options"], strict=True):
            shown_option["value"] = option.label


def _form_originals(payload: FormToolPayload, page: dict[str, Any]) -> None:
    props, shown_props = payload.form_schema.get("properties"), page["schema"].get("properties")
    if not isinstance(props, dict) or not isinstance(shown_props, dict):
        return
    for name, spec in props.items():
        shown_spec = shown_props.get(shown(name))
        if not isinstance(spec, dict) or not isinstance(shown_spec, dict):
            continue
        shown_spec["key"] = name
        if isinstance(spec.get("enum"), list):
            shown_spec["values"] = spec["enum"]
        items = spec.get("items")
        if isinstance(items, dict) and isinstance(items.get("enum"), list):
            shown_spec["items"]["values"] = items["enum"]
