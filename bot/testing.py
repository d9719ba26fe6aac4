"""Fakes users need to test their own agents: a fixed clock, scripted calls, a surface.

Shipped in the package (not only in tests/) so deployments can test their
own tools and registrations against the real turn loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.kernel.messages import ModelReply, RequestedCall
from bot.questions.quorum import MayAnswer
from bot.questions.records import Question, RunRecord


@dataclass(eq=False)  # kept in sets by whoever may cancel it
class Scheduled:
    """A callback a ``FixedClock`` runs once it has been advanced to ``at``."""

    at: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FixedClock:
    """A clock that moves only when told to, and runs what was scheduled on it as it passes."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self._scheduled: list[Scheduled] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = sorted((s for s in self._scheduled if s.at <= self.now), key=lambda s: s.at)
        self._scheduled = [s for s in self._scheduled if s.at > self.now]
        for scheduled in due:
            if not scheduled.cancelled:
                scheduled.callback()

    def call_later(self, delay: float, callback: Callable[[], None], /) -> Scheduled:
        """Run ``callback`` once the clock is advanced ``delay`` seconds past now (the
        deliverer's ``Timers``, so a test says when a retry is due)."""
        scheduled = Scheduled(self.now + delay, callback)
        self._scheduled.append(scheduled)
        return scheduled


def call(name: str, **arguments: Any) -> RequestedCall:
    return RequestedCall(name, arguments)


def calls(*requested: RequestedCall, text: str = "") -> ModelReply:
    """A model reply that asks for these tool calls in one round."""
    return ModelReply(text=text, calls=tuple(requested))


def say(text: str) -> ModelReply:
    return ModelReply(text=text)


def question(
    text: str, *options: str, header: str = "", multi_select: bool = False
) -> dict[str, Any]:
    """One ask_user question in the wire shape the model writes."""
    return {
        "question": text,
        "header": header,
        "options": [{"label": label, "description": ""} for label in options],
        "multi_select": multi_select,
    }


@dataclass
class RecordingSurface:
    """A surface that remembers what it was asked to show.

    ``questions`` holds each post (its run and question), ``refreshed`` each redraw
    (the question and the message it redrew); ``tokens`` and ``audiences`` the token and
    who may answer each question was last drawn with, by interrupt id.
    """

    name: str = "test"
    questions: list[tuple[RunRecord, Question]] = field(default_factory=list)
    closed: list[Question] = field(default_factory=list)
    outcomes: list[tuple[str, str, bool]] = field(default_factory=list)
    refreshed: list[tuple[Question, dict[str, Any]]] = field(default_factory=list)
    moved: list[tuple[Question, dict[str, Any]]] = field(default_factory=list)
    nudges: list[tuple[Question, dict[str, Any]]] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)
    audiences: dict[str, MayAnswer] = field(default_factory=dict)

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        self.questions.append((run, question))
        self._drawn(question, token, may)
        return {"surface": self.name, "message": f"m{len(self.questions)}"}

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        self.closed.append(record)

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        self.outcomes.append((run.run_id, text, failed))

    async def refresh_question(
        self,
        run: RunRecord,
        question: Question,
        ref: dict[str, Any],
        *,
        token: str,
        may: MayAnswer,
    ) -> None:
        self.refreshed.append((question, ref))
        self._drawn(question, token, may)

    async def show_moved(
        self, run: RunRecord, record: Question, previous_ref: dict[str, Any]
    ) -> None:
        self.moved.append((record, previous_ref))

    async def post_nudge(self, run: RunRecord, record: Question, nudge: dict[str, Any]) -> None:
        self.nudges.append((record, nudge))

    def _drawn(self, question: Question, token: str, may: MayAnswer) -> None:
        self.tokens[question.interrupt_id] = token
        self.audiences[question.interrupt_id] = may

    @property
    def last_token(self) -> str:
        """The token the last question posted was last drawn with."""
        return self.tokens[self.questions[-1][1].interrupt_id]
