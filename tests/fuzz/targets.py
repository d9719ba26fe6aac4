"""atheris targets: the token decoder and each renderer of a pause payload.

Each target takes bytes and must either finish or refuse with the error its
contract names; any other exception is a crash (atheris saves the input).

- ``tokens``: ``TokenSigner.decode`` on any string; only TokenError may come out.
- ``block_kit``, ``adaptive_card``, ``console_json``: a JSON payload that the
  interaction's own schema accepts (as every payload a surface draws has been),
  drawn as a Slack message, a Teams card and the console's JSON.
- ``edits``, ``form_answers``, ``schemas``: JSON read as leniently as a request
  body is (NaN, Infinity, integers of any length), checked as an approval's
  edit, a form's answer and a form's or an approval's schema: only the
  checker's own error may come out, and what an edit or an answer is turned
  into holds only numbers JSON carries, nested no deeper than allowed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from adapters.console._views import question_json
from adapters.slack._render import question_message
from adapters.teams._cards import CardContext, question_card
from bot.client.errors import FormAnswerError, FormSchemaError
from bot.contract.decisions import MAX_ARGUMENTS_DEPTH
from bot.contract.edits import check_edit
from bot.contract.form_schema import check_arguments_schema, check_form_answer, check_form_schema
from bot.contract.json_values import canonical, depth, first_unkept_number
from bot.contract.payloads import payload_of
from bot.human.capability import ASK_USER, HumanInteractionError
from bot.human.factory import ask_user_registration
from bot.human.tokens import SigningKey, TokenError, TokenSigner
from bot.interactions.approval import APPROVAL, approval_registration
from bot.questions.records import Question
from tests.support import open_question

SECRET = "fuzz-secret-" + "x" * 40
SIGNER = TokenSigner([SigningKey("k1", SECRET, SECRET)])
TOKEN = "h." + "t" * 200 + ".s"
REGISTRATIONS = {ASK_USER: ask_user_registration(), APPROVAL: approval_registration()}


def tokens(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    with contextlib.suppress(TokenError):
        SIGNER.decode(text, now=1_800_000_000.0)


def _payload(data: bytes) -> tuple[str, dict[str, Any]] | None:
    """(name, payload) when the bytes are a payload its interaction accepts."""
    if not data:
        return None
    name = (ASK_USER, APPROVAL, "custom")[data[0] % 3]
    try:
        value = json.loads(data[1:].decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    registration = REGISTRATIONS.get(name)
    if registration is not None:
        try:
            value = registration.validate_payload(value)
        except HumanInteractionError:
            return None
    return name, value


def block_kit(data: bytes) -> None:
    found = _payload(data)
    if found is not None:
        name, payload = found
        interrupt = open_question(name, payload)
        json.dumps(question_message(interrupt, token=TOKEN, requester="<@U1>", audience="Only."))


def adaptive_card(data: bytes) -> None:
    found = _payload(data)
    if found is not None:
        name, payload = found
        question = open_question(name, payload)
        context = CardContext(question, TOKEN, "Ana", "Ana may answer.")
        json.dumps(question_card(context))


def console_json(data: bytes) -> None:
    found = _payload(data)
    if found is not None:
        name, payload = found
        record = Question(
            "i1", "r1", "console", name, "call1", "cp1", payload_of(name, payload), 0.0, 60.0
        )
        json.dumps(question_json(record, TOKEN))


# Approvals to edit: one whose schema lists some of its arguments (two of them edited as
# JSON), and one whose edits are shaped by its arguments alone.
EDITED: tuple[dict[str, Any], ...] = (
    {
        "arguments": {"service": "web", "replicas": 2, "options": {"limit": 1}, "dry_run": True},
        "arguments_schema": {
            "type": "object",
            "properties": {
                "service": {"type": "string", "enum": ["web", "api"]},
                "replicas": {"type": "integer", "minimum": 0, "maximum": 50},
                "ratio": {"type": "number"},
                "options": {"type": "object"},
                "hosts": {"type": "array"},
            },
            "required": ["service"],
        },
    },
    {"arguments": {"env": "prod", "replicas": 2, "labels": ["a"], "note": None, "ok": False}},
)
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
    "required": ["name"],
}


def _lenient(raw: bytes) -> tuple[Any] | None:
    """``raw`` as a request body's JSON (a 1-tuple), or None when it is none."""
    try:
        return (json.loads(raw.decode("utf-8", "replace")),)
    except (ValueError, RecursionError):
        return None


def _carried(value: Any) -> None:
    """What a checker let through is JSON the bridge keeps, and has one spelling."""
    assert first_unkept_number(value) is None, value
    assert depth(value) <= MAX_ARGUMENTS_DEPTH + 1
    canonical(value)


def edits(data: bytes) -> None:
    sent = _lenient(data[1:]) if data else None
    if sent is None:
        return
    try:
        edited = check_edit(EDITED[data[0] % len(EDITED)], sent[0])
    except FormAnswerError:
        return
    _carried(edited)


def form_answers(data: bytes) -> None:
    sent = _lenient(data)
    if sent is None:
        return
    try:
        answer = check_form_answer(FORM, sent[0])
    except FormAnswerError:
        return
    _carried(answer)


def schemas(data: bytes) -> None:
    sent = _lenient(data[1:]) if data else None
    if sent is None:
        return
    check = (check_form_schema, check_arguments_schema)[data[0] % 2]
    with contextlib.suppress(FormSchemaError):
        check(sent[0])


TARGETS: dict[str, Callable[[bytes], None]] = {
    "tokens": tokens,
    "block_kit": block_kit,
    "adaptive_card": adaptive_card,
    "console_json": console_json,
    "edits": edits,
    "form_answers": form_answers,
    "schemas": schemas,
}
