"""Block Kit as Slack checks it: slack_sdk's own models, and the limits they leave unchecked.

``slack_sdk.models`` validates each object's own fields only (a section's
text, a view's title) and keeps select and radio options as plain dicts,
so a too-long button text or option value inside a block passes it. Here
every object the models parse is validated, however deep, and the
documented limits the models do not check are checked beside them, with
Slack's numbers written out (not ``adapters.slack._limits``, so a wrong
constant there is caught). Each problem names where it is as a JSON
pointer, as Slack's ``invalid_blocks`` errors do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.basic_objects import JsonObject
from slack_sdk.models.blocks import Block, Option
from slack_sdk.models.views import View

MESSAGE_BLOCKS = 50
MODAL_BLOCKS = 100
# chat.postMessage: "text" over 40,000 characters is refused as msg_too_long.
MESSAGE_TEXT = 40_000
# Not documented; Slack answers msg_blocks_too_long past roughly 13,000 characters of
# block text (slackapi/bolt-js issues 2509 and 2867): the fake refuses at that.
BLOCKS_TEXT = 13_000

TEXT = 3_000
SECTION_FIELDS = 10
FIELD_TEXT = 2_000
HEADER_TEXT = 150
CONTEXT_ELEMENTS = 10
ACTIONS_ELEMENTS = 25
BLOCK_ID = 255
ACTION_ID = 255
BUTTON_TEXT = 75
BUTTON_VALUE = 2_000
CONFIRM = {"title": 100, "text": 300, "confirm": 30, "deny": 30}
OPTION_TEXT = 75
OPTION_VALUE = 150
OPTION_DESCRIPTION = 75
SELECT_OPTIONS = 100
CHOICE_OPTIONS = 10
PLACEHOLDER = 150
INPUT_LABEL = 2_000
INPUT_HINT = 2_000
TEXT_INPUT = 3_000
VIEW_TEXT = 24  # a modal's title, submit and close
PRIVATE_METADATA = 3_000
CALLBACK_ID = 255

SELECTS = ("static_select", "multi_static_select")
CHOICES = ("radio_buttons", "checkboxes")
TEXT_INPUTS = ("plain_text_input", "email_text_input", "url_text_input")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def message_problems(message: Mapping[str, Any]) -> list[str]:
    """What Slack would refuse in a chat.postMessage / chat.update / respond payload."""
    problems = []
    text = message.get("text")
    if text is not None and (not isinstance(text, str) or len(text) > MESSAGE_TEXT):
        problems.append(f"text must be a string of at most {MESSAGE_TEXT} characters")
    blocks = message.get("blocks")
    if blocks is None:
        if not text:
            problems.append("a message needs text or blocks")
        return problems
    return problems + blocks_problems(blocks, limit=MESSAGE_BLOCKS, where="/blocks")


def view_problems(view: Mapping[str, Any]) -> list[str]:
    """What Slack would refuse in a views.open / views.update ``view``."""
    problems = []
    try:
        View(**view).validate_json()
    except (SlackObjectFormationError, TypeError, KeyError) as error:
        problems.append(f"{error} [json-pointer:/view]")
    if view.get("type") != "modal":
        problems.append("a modal's type must be modal [json-pointer:/view/type]")
    for key in ("title", "submit", "close"):
        if key in view:
            problems += _text(view[key], f"/view/{key}", most=VIEW_TEXT, plain=True)
    if "title" not in view:
        problems.append("a modal needs a title [json-pointer:/view/title]")
    metadata = view.get("private_metadata", "")
    if not isinstance(metadata, str) or len(metadata) > PRIVATE_METADATA:
        problems.append(f"private_metadata over {PRIVATE_METADATA} [json-pointer:/view]")
    if len(str(view.get("callback_id", ""))) > CALLBACK_ID:
        problems.append(f"callback_id over {CALLBACK_ID} [json-pointer:/view/callback_id]")
    blocks = view.get("blocks")
    if not isinstance(blocks, list) or not blocks:
        return [*problems, "a modal needs 1 to 100 blocks [json-pointer:/view/blocks]"]
    return problems + blocks_problems(blocks, limit=MODAL_BLOCKS, where="/view/blocks")


def blocks_problems(blocks: Sequence[Any], *, limit: int, where: str) -> list[str]:
    """Each block through slack_sdk's models, deep, and through the unchecked limits."""
    problems = []
    if not isinstance(blocks, list):
        return [f"blocks must be a list [json-pointer:{where}]"]
    if len(blocks) > limit:
        problems.append(f"no more than {limit} items allowed [json-pointer:{where}]")
    if sum(len(t) for t in _texts(blocks)) > BLOCKS_TEXT and where == "/blocks":
        problems.append(f"the blocks' text passes {BLOCKS_TEXT} characters (msg_blocks_too_long)")
    ids = [b.get("block_id") for b in blocks if isinstance(b, Mapping) and b.get("block_id")]
    if len(ids) != len(set(ids)):
        problems.append(f"block_id values must be unique [json-pointer:{where}]")
    for index, block in enumerate(blocks):
        here = f"{where}/{index}"
        if not isinstance(block, Mapping):
            problems.append(f"a block must be an object [json-pointer:{here}]")
            continue
        try:
            parsed = Block.parse(dict(block))
        except (SlackObjectFormationError, TypeError, KeyError, AttributeError) as error:
            problems.append(f"{error} [json-pointer:{here}]")
            continue
        if parsed is None or type(parsed) is Block:
            problems.append(f"unknown block type {block.get('type')!r} [json-pointer:{here}]")
            continue
        problems += _validated(parsed, here)
        problems += _block(block, here)
    return problems


# -- slack_sdk's models, all the way down -----------------------------------------


def _validated(node: JsonObject, where: str) -> list[str]:
    problems = []
    try:
        node.validate_json()
    except SlackObjectFormationError as error:
        problems.append(f"{error} [json-pointer:{where}]")
    for name in sorted(node.attributes):
        value = getattr(node, name, None)
        for index, child in _children(name, value):
            path = f"{where}/{name}" if index is None else f"{where}/{name}/{index}"
            problems += _validated(child, path)
    return problems


def _children(name: str, value: Any) -> Iterator[tuple[int | None, JsonObject]]:
    """The model objects under an attribute; option dicts the models keep raw are parsed."""
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        at = index if isinstance(value, list) else None
        if isinstance(item, JsonObject):
            yield at, item
        elif isinstance(item, Mapping) and name in ("options", "initial_option", "initial_options"):
            yield at, Option(**dict(item))


# -- the limits the models leave unchecked ----------------------------------------


def _block(block: Mapping[str, Any], where: str) -> list[str]:
    kind = block.get("type")
    problems = []
    if len(str(block.get("block_id", ""))) > BLOCK_ID:
        problems.append(f"block_id over {BLOCK_ID} [json-pointer:{where}/block_id]")
    if kind == "section":
        if "text" not in block and "fields" not in block:
            problems.append(f"a section needs text or fields [json-pointer:{where}]")
        if "text" in block:
            problems += _text(block["text"], f"{where}/text", most=TEXT)
        fields = block.get("fields", [])
        if len(fields) > SECTION_FIELDS:
            problems.append(f"more than {SECTION_FIELDS} fields [json-pointer:{where}/fields]")
        for index, field in enumerate(fields):
            problems += _text(field, f"{where}/fields/{index}", most=FIELD_TEXT)
    elif kind == "header":
        problems += _text(block.get("text"), f"{where}/text", most=HEADER_TEXT, plain=True)
    elif kind == "context":
        elements = block.get("elements", [])
        if not 1 <= len(elements) <= CONTEXT_ELEMENTS:
            problems.append(f"1 to {CONTEXT_ELEMENTS} elements [json-pointer:{where}/elements]")
        for index, element in enumerate(elements):
            problems += _text(element, f"{where}/elements/{index}", most=TEXT)
    elif kind == "actions":
        elements = block.get("elements", [])
        if not 1 <= len(elements) <= ACTIONS_ELEMENTS:
            problems.append(f"1 to {ACTIONS_ELEMENTS} elements [json-pointer:{where}/elements]")
        actions = [e.get("action_id") for e in elements if e.get("action_id")]
        if len(actions) != len(set(actions)):
            problems.append(f"action_id values must be unique [json-pointer:{where}]")
        for index, element in enumerate(elements):
            problems += _element(element, f"{where}/elements/{index}")
    elif kind == "input":
        problems += _text(block.get("label"), f"{where}/label", most=INPUT_LABEL, plain=True)
        if "hint" in block:
            problems += _text(block["hint"], f"{where}/hint", most=INPUT_HINT, plain=True)
        if not isinstance(block.get("element"), Mapping):
            problems.append(f"an input needs an element [json-pointer:{where}/element]")
        else:
            problems += _element(block["element"], f"{where}/element")
    elif kind != "divider":
        problems.append(f"block type {kind!r} is not one these checks know [json-pointer:{where}]")
    return problems


def _element(element: Mapping[str, Any], where: str) -> list[str]:
    kind = element.get("type")
    problems = []
    if len(str(element.get("action_id", ""))) > ACTION_ID:
        problems.append(f"action_id over {ACTION_ID} [json-pointer:{where}/action_id]")
    if "placeholder" in element:
        problems += _text(element["placeholder"], f"{where}/placeholder", PLACEHOLDER, plain=True)
    if kind == "button":
        problems += _text(element.get("text"), f"{where}/text", most=BUTTON_TEXT, plain=True)
        if len(str(element.get("value", ""))) > BUTTON_VALUE:
            problems.append(f"value over {BUTTON_VALUE} [json-pointer:{where}/value]")
        confirm = element.get("confirm")
        if confirm is not None:
            for key, most in CONFIRM.items():
                problems += _text(confirm.get(key), f"{where}/confirm/{key}", most, plain=True)
    elif kind in SELECTS or kind in CHOICES:
        problems += _options(element, where, kind)
    elif kind in TEXT_INPUTS:
        most = element.get("max_length", TEXT_INPUT)
        least = element.get("min_length", 0)
        if not isinstance(most, int) or not 1 <= most <= TEXT_INPUT:
            problems.append(f"max_length must be 1 to {TEXT_INPUT} [json-pointer:{where}]")
        elif not isinstance(least, int) or not 0 <= least <= most:
            problems.append(f"min_length must be 0 to max_length [json-pointer:{where}]")
        elif len(str(element.get("initial_value", ""))) > most:
            problems.append(f"initial_value over max_length [json-pointer:{where}]")
    elif kind == "number_input":
        for key in ("min_value", "max_value", "initial_value"):
            if key in element and not isinstance(element[key], str):
                problems.append(f"{key} must be a string [json-pointer:{where}/{key}]")
    elif kind == "datepicker":
        if "initial_date" in element and not DATE.match(str(element["initial_date"])):
            problems.append(f"initial_date must be YYYY-MM-DD [json-pointer:{where}]")
    elif kind == "datetimepicker":
        at = element.get("initial_date_time", 0)
        if not isinstance(at, int) or isinstance(at, bool):
            problems.append(f"initial_date_time must be an integer [json-pointer:{where}]")
    else:
        problems.append(
            f"element type {kind!r} is not one these checks know [json-pointer:{where}]"
        )
    return problems


def _options(element: Mapping[str, Any], where: str, kind: Any) -> list[str]:
    problems = []
    options = element.get("options")
    most = CHOICE_OPTIONS if kind in CHOICES else SELECT_OPTIONS
    if not isinstance(options, list) or not 1 <= len(options) <= most:
        return [f"{kind} takes 1 to {most} options [json-pointer:{where}/options]"]
    for index, option in enumerate(options):
        here = f"{where}/options/{index}"
        # A select's options are plain_text; radio buttons and checkboxes may be mrkdwn.
        problems += _text(option.get("text"), f"{here}/text", OPTION_TEXT, plain=kind in SELECTS)
        value = option.get("value")
        if not isinstance(value, str) or not 1 <= len(value) <= OPTION_VALUE:
            problems.append(f"value must be 1 to {OPTION_VALUE} characters [json-pointer:{here}]")
        if "description" in option:
            problems += _text(option["description"], f"{here}/description", OPTION_DESCRIPTION)
    values = [option.get("value") for option in options]
    if len(values) != len(set(values)):
        problems.append(f"option values must be unique [json-pointer:{where}/options]")
    initial = element.get("initial_options") or []
    if "initial_option" in element:
        initial = [element["initial_option"]]
    for option in initial:
        if option not in options:
            problems.append(f"an initial option is not among the options [json-pointer:{where}]")
    if "max_selected_items" in element and not element["max_selected_items"] >= 1:
        problems.append(f"max_selected_items must be at least 1 [json-pointer:{where}]")
    return problems


def _text(node: Any, where: str, most: int, *, plain: bool = False) -> list[str]:
    if not isinstance(node, Mapping) or node.get("type") not in ("plain_text", "mrkdwn"):
        return [f"a text object is needed [json-pointer:{where}]"]
    if plain and node["type"] != "plain_text":
        return [f"must be plain_text [json-pointer:{where}/type]"]
    text = node.get("text")
    if not isinstance(text, str) or not 1 <= len(text) <= min(most, TEXT):
        size = len(text) if isinstance(text, str) else "no"
        return [
            f"text must be 1 to {min(most, TEXT)} characters, not {size} [json-pointer:{where}]"
        ]
    return []


def _texts(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        if node.get("type") in ("plain_text", "mrkdwn") and isinstance(node.get("text"), str):
            yield node["text"]
        for key, value in node.items():
            if key != "text" or not isinstance(value, str):
                yield from _texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item)
