"""The port a chat surface implements so RunService can talk through it.

RunService decides what to say; a surface only knows how to say it on its
platform (Block Kit, Adaptive Card, console page).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bot.errors import BotError
from bot.questions.quorum import MayAnswer
from bot.questions.records import Question, RunRecord


class DeliveryError(BotError):
    """A surface could not deliver; says whether (and when) trying again can help.

    ``permanent`` failures (bad credentials, a channel the bot is not in) are
    marked on the run with ``reason`` for an admin to read; anything else is
    retried with backoff, no sooner than ``retry_after`` seconds when the
    platform said so (Slack's Retry-After, a connector's 429).
    """

    def __init__(
        self, reason: str, *, permanent: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.retry_after = retry_after


class Surface(Protocol):
    """A place runs start from and questions are posted to.

    A surface draws the stored ``Question``, open or closed; an open one comes
    with the token its answers carry (re-derived, never stored) and ``may``,
    who may answer it as the policy decided it once for every surface.
    """

    name: str

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        """Post the question; return a reference that lets it be edited later.

        Raise ``DeliveryError`` to say whether a retry can help; any other
        exception is retried as a transient failure.
        """
        ...

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        """Edit the posted question to show who answered, or that it expired."""
        ...

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        """Post the run's final text (or failure) in its thread."""
        ...


@runtime_checkable
class RedrawsQuestions(Protocol):
    """What a surface adds so admin commands can change a posted question.

    Optional: a surface without it still gets every question posted again
    by ``resend``; only the two edits below are skipped (and logged).
    """

    async def refresh_question(
        self,
        run: RunRecord,
        question: Question,
        ref: dict[str, Any],
        *,
        token: str,
        may: MayAnswer,
    ) -> None:
        """Redraw the question at ``ref`` in place: new expiry, the token re-derived with it."""
        ...

    async def show_moved(
        self, run: RunRecord, record: Question, previous_ref: dict[str, Any]
    ) -> None:
        """Edit the earlier message at ``previous_ref`` to point to ``record.message_ref``."""
        ...


@runtime_checkable
class NudgesQuestions(Protocol):
    """A surface that posts a policy's reminders and escalation pings
    (``bot.service.delivering.nudges``) in the thread of the posted question.
    ``nudge`` carries ``kind`` (``reminded`` or ``escalated``), ``level``, and who
    to mention: ``people`` ids, ``groups``, ``anyone``."""

    async def post_nudge(self, run: RunRecord, record: Question, nudge: dict[str, Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class Conversation:
    """Where a run was started: surface, scope (workspace/tenant), thread.

    ``reference`` is whatever the surface needs to post there later, even
    from another process (a Bot Framework conversation reference, a Slack
    channel and thread ts); RunService stores it and never reads inside it.
    """

    surface: str
    scope: str
    key: str
    thread: str = ""
    reference: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "thread": self.thread, "reference": self.reference}
