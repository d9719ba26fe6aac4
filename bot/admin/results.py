"""What an admin command comes to: a closed union of frozen values.

Each surface renders them its own way (Block Kit, an Adaptive Card, text,
JSON); none of them decides anything. ``at`` is when the command ran, so a
renderer computes ages without reading a clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.admin._commands import Usage
from bot.questions.records import (
    AuditEvent,
    OutboxRow,
    Question,
    QuestionStats,
    RunRecord,
)
from bot.stores.ports import Closed


@dataclass(frozen=True, slots=True)
class HelpShown:
    usages: tuple[Usage, ...]
    admin: bool


@dataclass(frozen=True, slots=True)
class PendingItem:
    """One question of a ``pending`` page: the record, and what the listing adds to it."""

    question: Question
    # Who asked, and where: its run's requester and surface (blank if the run is gone).
    requester: str
    surface: str
    may_answer: tuple[str, ...]
    # Pass as ``after=`` for the page that goes on after this question.
    cursor: str


@dataclass(frozen=True, slots=True)
class PendingPage:
    at: float
    items: tuple[PendingItem, ...]
    # Pass as ``after=`` for the next page; None on the last one.
    next_after: str | None


@dataclass(frozen=True, slots=True)
class RecordShown:
    """``show``: one question's record, its run, who may answer, its history and deliveries."""

    at: float
    record: Question
    run: RunRecord | None
    may_answer: tuple[str, ...]
    history: tuple[AuditEvent, ...]
    deliveries: tuple[OutboxRow, ...]


@dataclass(frozen=True, slots=True)
class CancelDone:
    interrupt_id: str
    run_id: str
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class Resent:
    interrupt_id: str
    run_id: str


@dataclass(frozen=True, slots=True)
class Extended:
    interrupt_id: str
    run_id: str
    previous_expires_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class StatsShown:
    at: float
    stats: QuestionStats


@dataclass(frozen=True, slots=True)
class AuditShown:
    run_id: str
    events: tuple[AuditEvent, ...]


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Closed questions, newest first; ``next_after`` continues after the last one."""

    items: tuple[Closed, ...]
    next_after: str | None


@dataclass(frozen=True, slots=True)
class Purged:
    """Questions closed before ``before`` (a day, UTC) lost their content; ``count`` did now."""

    before: str
    count: int


@dataclass(frozen=True, slots=True)
class AlreadyDone:
    """The command's idempotency key was used: it ran once already (a replay, a retry),
    so nothing changed now."""

    command: str
    interrupt_id: str


# Refusals: nothing changed; ``text`` says why and what to do.
@dataclass(frozen=True, slots=True)
class AdminsOnly:
    command: str


@dataclass(frozen=True, slots=True)
class CommandInvalid:
    text: str


@dataclass(frozen=True, slots=True)
class UnknownId:
    """The id named no question or run (``text`` says which)."""

    text: str


@dataclass(frozen=True, slots=True)
class NotOpen:
    interrupt_id: str
    status: str


@dataclass(frozen=True, slots=True)
class TooLong:
    interrupt_id: str
    latest: float


AdminRefusal = AdminsOnly | CommandInvalid | UnknownId | NotOpen | TooLong
# What a surface shows as its one-sentence summary: a change made, or none needed.
AdminDone = CancelDone | Resent | Extended | AlreadyDone | Purged
AdminResult = (
    HelpShown
    | PendingPage
    | RecordShown
    | CancelDone
    | Resent
    | Extended
    | AlreadyDone
    | StatsShown
    | AuditShown
    | HistoryPage
    | Purged
    | AdminRefusal
)


# The kinds scripts, metrics and audit rows know results by, where a result's
# class was renamed after they were written ("NotFound" is also the API
# client's 404 error, so the class took a name of its own).
_KINDS_BEFORE_RENAMES: dict[type, str] = {UnknownId: "NotFound"}


def kind_of(result: AdminResult) -> str:
    """The result's kind as the JSON output, the metrics and the audit log name it."""
    return _KINDS_BEFORE_RENAMES.get(type(result), type(result).__name__)
