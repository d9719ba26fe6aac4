"""Text every store keeps as given: a request's strings are checked once, before any store
(the doors call it: ``/v1``, the console, the admin commands).

PostgreSQL cannot keep U+0000 in a text column or in jsonb, and no store can
encode a lone surrogate as UTF-8 (``json.loads`` lets ``"\\ud800"`` through).
SQLite would keep a NUL, so without this check the same request would be
taken on one backend and fail on the other. Such a character is refused
rather than escaped: it is never in text a person means, so it is a bug in
the sender, and a refusal tells the sender so while an escape would hand
back something else than was sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Unstorable:
    """Where the first such character is (``payload.questions.0.question``) and which it is."""

    field: str
    character: str

    @property
    def code_point(self) -> str:
        return code_point(self.character)


def code_point(character: str) -> str:
    """A character as ``U+0000``: a sentence naming it must not carry it on."""
    return f"U+{ord(character):04X}"


def unstorable_character(text: str) -> str | None:
    """The first character of ``text`` no store keeps, or None."""
    found = _UNSTORABLE.search(text)
    return found.group() if found else None


def storable_text(text: str) -> str:
    """``text`` with each character no store keeps replaced by U+FFFD, for what a person
    typed in a chat, which the platform sent and no sender can be told to fix."""
    return _UNSTORABLE.sub("\ufffd", text)


def first_unstorable(value: Any, *, field: str = "") -> Unstorable | None:
    """The first string in a parsed JSON value (keys included) holding such a character."""
    # Iterative: the parser already bounded the depth, but a walk should not recurse anyway.
    stack: list[tuple[Any, str]] = [(value, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            character = unstorable_character(item)
            if character is not None:
                return Unstorable(where or "body", character)
        elif isinstance(item, dict):
            # Reversed onto the stack, so the first field in the body is reported first.
            for key, child in reversed(list(item.items())):
                inner = f"{where}.{key}" if where else str(key)
                character = unstorable_character(str(key))
                if character is not None:
                    return Unstorable(f"{where or 'body'} (a key)", character)
                stack.append((child, inner))
        elif isinstance(item, list):
            stack.extend((child, f"{where}.{i}") for i, child in reversed(list(enumerate(item))))
    return None
