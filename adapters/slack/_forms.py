"""A ``form`` question in Block Kit: its message, its modal, and the answer read back.

Pure functions, no I/O. Each property of the form's schema becomes one
input block ``f:<name>``: text (``plain_text_input``, ``email_text_input``,
``url_text_input``), ``datepicker`` / ``datetimepicker``, ``number_input``,
Yes / No radio buttons for a boolean (an unticked checkbox could not tell
"no" from "not answered"), radio buttons or a select for an enum, and
checkboxes or a multi-select for an array of choices (options carry the
choice's index, so a value keeps its full length). A choice shows its
title where the schema gives one (``enumNames``, ``oneOf`` and ``anyOf``
titles), else its value. Defaults fill the inputs in. Every text of the
schema is shown through ``bot.display`` (plain_text reads no markup; its
hidden controls are made visible), then clipped. Reading back only
reshapes (a choice's index to its value, a number's text to a number, a
picked time to RFC 3339); whether the answer fits is decided in ``bot/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from adapters._form_input import typed_number
from adapters.slack import _limits as L
from adapters.slack._limits import clip
from bot.contract.form_schema import MAX_STRING
from bot.contract.payloads import FormToolPayload
from bot.display import display

ANSWER = "answer"  # every input's action_id, as in ``_modals``
YES_NO = (("Yes", "true"), ("No", "false"))


def field_block(name: str) -> str:
    return clip(f"f:{name}", L.BLOCK_ID)


def properties(payload: FormToolPayload) -> dict[str, Mapping[str, Any]]:
    found = payload.form_schema.get("properties")
    if not isinstance(found, Mapping):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, Mapping)}


def label_of(name: str, spec: Mapping[str, Any]) -> str:
    return str(spec.get("title") or name)


# -- the modal ----------------------------------------------------------------


def form_inputs(payload: FormToolPayload) -> list[dict[str, Any]]:
    """The modal's blocks: the message, then one input per property."""
    required = set(payload.form_schema.get("required") or [])
    blocks: list[dict[str, Any]] = []
    message = display(payload.message, markup="plain")
    if message:
        blocks.append(_note(message))
    for name, spec in properties(payload).items():
        blocks.append(input_block(name, spec, _element(spec), optional=name not in required))
    return blocks


def input_block(
    name: str, spec: Mapping[str, Any], element: dict[str, Any], *, optional: bool
) -> dict[str, Any]:
    """A schema property's input block: labelled with its title (else its name), hinted
    with its description, both shown as text."""
    block: dict[str, Any] = {
        "type": "input",
        "block_id": field_block(name),
        "optional": optional,
        "label": _plain(clip(_shown(label_of(name, spec)), L.INPUT_LABEL)),
        "element": element,
    }
    if spec.get("description"):
        block["hint"] = _plain(clip(_shown(spec["description"]), L.INPUT_HINT))
    return block


def _element(spec: Mapping[str, Any]) -> dict[str, Any]:
    kind, default = spec.get("type"), spec.get("default")
    if kind == "boolean":
        flag = None if default is None else ("true" if default else "false")
        return _choice(list(YES_NO), [flag], multi=False)
    if kind == "array":
        enum = _enum(spec)
        chosen = [str(i) for i, v in enumerate(enum) if v in (default or [])]
        element = _choice(_indexed(spec), chosen, multi=True)
        if element["type"] == "multi_static_select" and isinstance(spec.get("maxItems"), int):
            element["max_selected_items"] = max(1, spec["maxItems"])
        return element
    if _enum(spec):
        enum = _enum(spec)
        return _choice(
            _indexed(spec), [str(i) for i, v in enumerate(enum) if v == default], multi=False
        )
    if kind in ("integer", "number"):
        return _number(spec, default, decimal=kind == "number")
    return _text(spec, default)


def _enum(spec: Mapping[str, Any]) -> list[str]:
    """The choices' values, however the schema spells them (``bot.contract.form_schema``)."""
    return [value for value, _ in _titled(spec)]


def _titled(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(value, title) per choice: ``enum`` (titled by ``enumNames``), or ``oneOf`` /
    ``anyOf`` of ``{"const", "title"}``; for an array, of its ``items``."""
    items = spec.get("items")
    where = items if spec.get("type") == "array" and isinstance(items, Mapping) else spec
    if isinstance(where.get("enum"), list):
        values = [str(v) for v in where["enum"]]
        names = where.get("enumNames")
        if isinstance(names, list) and len(names) == len(values):
            return list(zip(values, map(str, names), strict=True))
        return [(v, v) for v in values]
    for key in ("oneOf", "anyOf"):
        options = where.get(key)
        if isinstance(options, list):
            return [
                (str(o.get("const")), str(o.get("title") or o.get("const")))
                for o in options
                if isinstance(o, Mapping)
            ]
    return []


def _indexed(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    # Options carry the choice's index: a value keeps its full length and any character.
    return [(title, str(i)) for i, (_, title) in enumerate(_titled(spec))]


def _number(spec: Mapping[str, Any], default: Any, *, decimal: bool) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "number_input",
        "action_id": ANSWER,
        "is_decimal_allowed": decimal,
    }
    # Block Kit takes these as strings.
    for key, slack_key in (("minimum", "min_value"), ("maximum", "max_value")):
        if isinstance(spec.get(key), int | float):
            element[slack_key] = str(spec[key])
    if isinstance(default, int | float) and not isinstance(default, bool):
        element["initial_value"] = str(default)
    return element


def _text(spec: Mapping[str, Any], default: Any) -> dict[str, Any]:
    fmt = spec.get("format")
    initial = default if isinstance(default, str) else None
    if fmt == "date":
        element: dict[str, Any] = {"type": "datepicker", "action_id": ANSWER}
        if initial:
            element["initial_date"] = initial
        return element
    if fmt == "date-time":
        element = {"type": "datetimepicker", "action_id": ANSWER}
        if initial:
            try:
                at = datetime.fromisoformat(initial.upper().replace("Z", "+00:00"))
                element["initial_date_time"] = int(at.timestamp())
            except ValueError:
                pass
        return element
    if fmt in ("email", "uri"):
        element = {"type": "email_text_input" if fmt == "email" else "url_text_input"}
        element["action_id"] = ANSWER
    else:
        # No answer longer than MAX_STRING fits the form, so the input takes no more.
        most = spec.get("maxLength")
        limit = min(most, MAX_STRING) if isinstance(most, int) else MAX_STRING
        element = {"type": "plain_text_input", "action_id": ANSWER, "max_length": max(limit, 1)}
        if isinstance(spec.get("minLength"), int) and spec["minLength"] > 0:
            element["min_length"] = min(spec["minLength"], element["max_length"])
        element["multiline"] = limit > 150
    if initial:
        # Shown as the person will submit it: its hidden controls visible, within the input.
        most = element.get("max_length", L.TEXT_INPUT_MAX)
        element["initial_value"] = clip(_shown(initial), most)
    return element


def _choice(choices: list[tuple[str, str]], initial: list[Any], *, multi: bool) -> dict[str, Any]:
    options = [_option(label, value) for label, value in choices[: L.SELECT_OPTIONS]]
    few = len(choices) <= L.CHOICE_OPTIONS
    if few:
        kind = "checkboxes" if multi else "radio_buttons"
    else:
        kind = "multi_static_select" if multi else "static_select"
    element: dict[str, Any] = {"type": kind, "action_id": ANSWER, "options": options}
    if not few:
        element["placeholder"] = _plain("Choose…")
    picked = [o for o in options if o["value"] in {str(v) for v in initial if v is not None}]
    if picked and multi:
        element["initial_options"] = picked
    elif picked:
        element["initial_option"] = picked[0]
    return element


def _option(label: str, value: str) -> dict[str, Any]:
    return {"text": _plain(clip(_shown(label), L.OPTION_TEXT)), "value": value}


# -- the submission -----------------------------------------------------------


def form_answer_from_state(payload: FormToolPayload, values: Mapping[str, Any]) -> dict[str, Any]:
    """The schema's object out of ``view.state.values``; an empty input is left out."""
    answer: dict[str, Any] = {}
    for name, spec in properties(payload).items():
        state = values.get(field_block(name), {})
        state = state.get(ANSWER, {}) if isinstance(state, Mapping) else {}
        value = _read(state if isinstance(state, Mapping) else {})
        if value is None or value == "" or (value == [] and spec.get("type") != "array"):
            continue
        answer[name] = _typed(spec, value)
    return answer


def _read(state: Mapping[str, Any]) -> Any:
    kind = state.get("type")
    if kind in ("radio_buttons", "static_select"):
        selected = state.get("selected_option")
        return selected.get("value") if isinstance(selected, Mapping) else None
    if kind in ("checkboxes", "multi_static_select"):
        chosen = state.get("selected_options") or []
        return [o.get("value") for o in chosen if isinstance(o, Mapping)]
    if kind == "datepicker":
        return state.get("selected_date")
    if kind == "datetimepicker":
        at = state.get("selected_date_time")
        if isinstance(at, int) and not isinstance(at, bool) and 0 <= at < 253_402_300_800:
            return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return at
    return state.get("value")


def _typed(spec: Mapping[str, Any], value: Any) -> Any:
    kind = spec.get("type")
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    if kind == "array" and isinstance(value, list):
        return [_choice_value(_enum(spec), v) for v in value]
    if _enum(spec) and isinstance(value, str):
        return _choice_value(_enum(spec), value)
    if kind in ("integer", "number") and isinstance(value, str):
        return typed_number(value, integer=kind == "integer")
    return value


def _note(text: str) -> dict[str, Any]:
    # Plain text: what the agent wrote cannot mention or link anyone.
    return {"type": "section", "text": _plain(clip(text, L.SECTION_TEXT))}


def _choice_value(enum: list[str], index: Any) -> Any:
    """An option's index -> its value; anything else stays as sent, for validation to refuse."""
    text = str(index)
    if text.isascii() and text.isdigit() and len(text) <= 6 and int(text) < len(enum):
        return enum[int(text)]
    return index


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}


def _shown(text: object) -> str:
    return display(text, markup="plain")
