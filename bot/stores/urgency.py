"""Whether a store call is made while a platform waits on it (an ack).

The run service marks it (``bot.service.running.foreground``); a store reads it to
leave housekeeping, such as SQLite's periodic WAL checkpoint, to a call
nobody waits on. A context variable, so each task carries its own mark.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

_waited_on: ContextVar[bool] = ContextVar("waited_on", default=False)


def waited_on() -> bool:
    """True inside the handling of a request a platform waits on (and what it awaits)."""
    return _waited_on.get()


def mark_waited_on(flag: bool) -> Token[bool]:
    return _waited_on.set(flag)


def unmark(token: Token[bool]) -> None:
    _waited_on.reset(token)
