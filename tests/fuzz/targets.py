"""atheris targets: the token decoder and each renderer of a pause payload.

Each target takes bytes and must either finish or refuse with the error its
contract names; any other exception is a crash (atheris saves the input).

- ``tokens``: ``TokenSigner.decode`` on any string; only TokenError may come out.
- ``block_kit``, ``adaptive_card``, ``console_json``: a JSON payload that the
  interaction's own schema accepts (as every payload a surface draws has been),
  drawn as a Slack message, a Teams card and the console's JSON.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from adapters.console._views import question_json
from adapters.slack._render import question_message
from adapters.teams._cards import CardContext, question_card
from bot.human.capability import ASK_USER, HumanInteractionError
from bot.human.factory import ask_user_registration
from bot.human.tokens import SigningKey, TokenError, TokenSigner
from bot.interactions.approval import APPROVAL, approval_registration
from bot.stores.records import Question
from tests.support import pending_interrupt

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
        interrupt = pending_interrupt(name, payload, token=TOKEN)
        json.dumps(question_message(interrupt, requester="<@U1>", audience="Only."))


def adaptive_card(data: bytes) -> None:
    found = _payload(data)
    if found is not None:
        name, payload = found
        question = pending_interrupt(name, payload, token=TOKEN)
        context = CardContext(question, TOKEN, "Ana", "Ana may answer.")
        json.dumps(question_card(context))


def console_json(data: bytes) -> None:
    found = _payload(data)
    if found is not None:
        name, payload = found
        record = Question("i1", "r1", "console", name, "call1", "cp1", payload, 0.0, 60.0)
        json.dumps(question_json(record, TOKEN))


TARGETS: dict[str, Callable[[bytes], None]] = {
    "tokens": tokens,
    "block_kit": block_kit,
    "adaptive_card": adaptive_card,
    "console_json": console_json,
}
