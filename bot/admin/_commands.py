"""Admin commands as values: what a person typed, parsed once for every surface.

``/hitl pending channel=C1``, a Teams message ``pending --user ...`` and the
shell's ``python -m bot admin pending --channel C1`` all parse here, so the
grammar is the same everywhere: a command word, then positional arguments,
then options as ``name=value`` or ``--name value``.
"""

from __future__ import annotations

import datetime
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from bot.errors import BotError
from bot.stores.storable import code_point, unstorable_character

MAX_PAGE = 100
DEFAULT_PAGE = 20
MAX_REASON_CHARS = 300


class UsageError(BotError):
    """The command could not be parsed; the message says what to type instead."""


@dataclass(frozen=True, slots=True)
class Help:
    pass


@dataclass(frozen=True, slots=True)
class Pending:
    scope: str | None = None
    requester: str | None = None
    name: str | None = None
    after: str | None = None
    limit: int = DEFAULT_PAGE


@dataclass(frozen=True, slots=True)
class Show:
    interrupt_id: str


@dataclass(frozen=True, slots=True)
class Cancel:
    interrupt_id: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Resend:
    interrupt_id: str


@dataclass(frozen=True, slots=True)
class Extend:
    interrupt_id: str
    seconds: float


@dataclass(frozen=True, slots=True)
class Stats:
    pass


@dataclass(frozen=True, slots=True)
class AuditLog:
    run_id: str


@dataclass(frozen=True, slots=True)
class History:
    """Closed questions, newest first; ``since``/``until`` are days (UTC), both included."""

    status: str | None = None
    scope: str | None = None
    surface: str | None = None
    requester: str | None = None
    by: str | None = None
    decision: str | None = None
    since: str | None = None
    until: str | None = None
    after: str | None = None
    limit: int = DEFAULT_PAGE


@dataclass(frozen=True, slots=True)
class Purge:
    """Purge the content of questions closed before the start of ``before`` (UTC)."""

    before: str  # YYYY-MM-DD, checked when parsed

    @property
    def before_time(self) -> float:
        return day_start(self.before)


Command = Help | Pending | Show | Cancel | Resend | Extend | Stats | AuditLog | History | Purge


def verb_of(command: Command) -> str:
    """The word that names the command, as typed (``audit`` for ``AuditLog``)."""
    return "audit" if isinstance(command, AuditLog) else type(command).__name__.lower()


@dataclass(frozen=True, slots=True)
class Usage:
    """One command's syntax and what it does, for ``help``."""

    name: str
    syntax: str
    summary: str


USAGES: tuple[Usage, ...] = (
    Usage(
        "pending",
        "pending [channel=<scope>] [user=<id>] [name=<registration>] [after=<cursor>] [limit=<n>]",
        "open questions: who asked, who may answer, age, expiry, link",
    ),
    Usage("show", "show <question-id>", "a question's payload, status, history and deliveries"),
    Usage("cancel", "cancel <question-id> [reason]", "close it; the run resumes cancelled"),
    Usage("resend", "resend <question-id>", "post it again; the old message points to the new"),
    Usage("extend", "extend <question-id> <duration, e.g. 2h>", "push its expiry back"),
    Usage("stats", "stats", "issued, answered, expired, cancelled, refusals, time to answer"),
    Usage("audit", "audit <run-id>", "a run's events, in order"),
    Usage(
        "history",
        "history [status=<answered|expired|cancelled>] [channel=<scope>] [surface=<name>]"
        " [user=<id>] [by=<id>] [decision=<word>] [since=<YYYY-MM-DD>] [until=<YYYY-MM-DD>]"
        " [after=<cursor>] [limit=<n>]",
        "closed questions, newest first: outcome, who decided, when",
    ),
    Usage(
        "purge",
        "purge --before <YYYY-MM-DD>",
        "empty what was asked and answered in questions closed before that day (UTC)",
    ),
    Usage("help", "help", "the commands you may use"),
)
_SYNTAX = {usage.name: usage.syntax for usage in USAGES}
_OPTION_NAMES = {
    "channel": "channel",
    "scope": "channel",
    "user": "user",
    "requester": "user",
    "name": "name",
    "registration": "name",
    "after": "after",
    "limit": "limit",
}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse(words: str | Sequence[str]) -> Command:
    """A command from text (``"cancel q1 wrong env"``) or from argv words."""
    if isinstance(words, str):
        try:
            words = shlex.split(words)
        except ValueError:
            raise UsageError("Unbalanced quotes; close the quote and try again.") from None
    for word in words:
        # Before any store reads an id or keeps a reason: PostgreSQL cannot hold it.
        character = unstorable_character(word)
        if character is not None:
            raise UsageError(
                f"A command cannot contain the character {code_point(character)}; retype it."
            )
    if not words:
        return Help()
    verb, rest = words[0].lower(), list(words[1:])
    match verb:
        case "help":
            return Help()
        case "stats":
            _no_more(verb, rest)
            return Stats()
        case "pending":
            return _pending(rest)
        case "show":
            return Show(_one_id(verb, rest))
        case "resend":
            return Resend(_one_id(verb, rest))
        case "audit":
            return AuditLog(_one_id(verb, rest))
        case "cancel":
            if not rest:
                raise _usage(verb)
            reason = " ".join(rest[1:]).strip()
            if len(reason) > MAX_REASON_CHARS:
                raise UsageError(f"Keep the reason under {MAX_REASON_CHARS} characters.")
            return Cancel(rest[0], reason)
        case "extend":
            if len(rest) != 2:
                raise _usage(verb)
            return Extend(rest[0], parse_duration(rest[1]))
        case "purge":
            return _purge(rest)
        case "history":
            return _history(rest)
        case _:
            raise UsageError(f"There is no admin command {verb!r}; type `help` for the list.")


def _digits(text: str) -> bool:
    """ASCII digits only ("¹".isdigit() is true, and int() refuses it), short enough for int()."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def parse_duration(text: str) -> float:
    """``90s``, ``30m``, ``2h``, ``1d``, ``1h30m`` -> seconds (positive)."""
    spelled = text.strip().lower()
    parts = _DURATION.findall(spelled)
    if not parts or "".join(n + u for n, u in parts) != spelled:
        raise UsageError(f"{text!r} is not a duration; write it like 30m, 2h or 1d.")
    seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError("The duration must be more than zero.")
    return seconds


def _options(verb: str, rest: list[str], names: dict[str, str]) -> dict[str, str]:
    """``key=value`` or ``--key value`` words, by the option each key names."""
    options: dict[str, str] = {}
    words = iter(rest)
    for word in words:
        if word.startswith("--"):
            key, value = word[2:], next(words, None)
            if "=" in key:
                key, value = key.split("=", 1)
        elif "=" in word:
            key, value = word.split("=", 1)
        else:
            raise _usage(verb)
        name = names.get(key.lower())
        if name is None or value is None or not value.strip():
            raise _usage(verb)
        options[name] = value.strip()
    return options


def _limit(options: dict[str, str]) -> int:
    if "limit" not in options:
        return DEFAULT_PAGE
    if not _digits(options["limit"]) or not 1 <= int(options["limit"]) <= MAX_PAGE:
        raise UsageError(f"limit is a whole number from 1 to {MAX_PAGE}.")
    return int(options["limit"])


_HISTORY_NAMES = {
    **_OPTION_NAMES,
    "status": "status",
    "surface": "surface",
    "route": "surface",
    "by": "by",
    "decided_by": "by",
    "decision": "decision",
    "since": "since",
    "until": "until",
}
_CLOSED = ("answered", "expired", "cancelled")


def _history(rest: list[str]) -> History:
    options = _options("history", rest, _HISTORY_NAMES)
    status = options.get("status")
    if status is not None and status not in _CLOSED:
        raise UsageError(f"status is one of {', '.join(_CLOSED)}.")
    for day in ("since", "until"):
        if day in options:
            options[day] = _day(options[day])
    after = options.get("after")
    if after is not None and not _digits(after):
        raise UsageError("after takes the cursor a page of `history` printed.")
    return History(
        status=status,
        scope=options.get("channel"),
        surface=options.get("surface"),
        requester=options.get("user"),
        by=options.get("by"),
        decision=options.get("decision"),
        since=options.get("since"),
        until=options.get("until"),
        after=after,
        limit=_limit(options),
    )


def _day(text: str) -> str:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise UsageError(f"{text!r} is not a day; write it as YYYY-MM-DD (UTC).") from None


def day_start(day: str) -> float:
    """The first second of ``day`` (YYYY-MM-DD), UTC."""
    date = datetime.date.fromisoformat(day)
    return datetime.datetime(date.year, date.month, date.day, tzinfo=datetime.UTC).timestamp()


def _pending(rest: list[str]) -> Pending:
    options = _options("pending", rest, _OPTION_NAMES)
    limit = _limit(options)
    after = options.get("after")
    if after is not None and not _digits(after):
        raise UsageError("after takes the cursor a page of `pending` printed.")
    return Pending(
        scope=options.get("channel"),
        requester=options.get("user"),
        name=options.get("name"),
        after=after,
        limit=limit,
    )


def _purge(rest: list[str]) -> Purge:
    if len(rest) == 2 and rest[0] == "--before":
        text = rest[1]
    elif len(rest) == 1 and rest[0].startswith(("--before=", "before=")):
        text = rest[0].split("=", 1)[1]
    else:
        raise _usage("purge")
    return Purge(_day(text))


def _one_id(verb: str, rest: list[str]) -> str:
    if len(rest) != 1:
        raise _usage(verb)
    return rest[0]


def _no_more(verb: str, rest: list[str]) -> None:
    if rest:
        raise _usage(verb)


def _usage(verb: str) -> UsageError:
    return UsageError(f"Usage: {_SYNTAX[verb]}")
