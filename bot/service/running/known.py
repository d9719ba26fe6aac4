"""Runs and questions this process created, wrote or read lately, kept for what never
changes about them.

A run's origin (its id, scope, surface, conversation, requester and text) is
fixed when it is created. Surfaces read only that to deliver a message, and
the answer policy only that to decide who may answer, so they may share one
remembered record instead of reading the run again for every message and
every click. Its status and outcome do change: read those from the store.

A question's run, call, scope, interaction, payload and answerers are fixed
when it is asked: the redeemer checks an answer against those without
reading the row. What may change (closed, or its expiry moved) is checked by
the close itself (``Close.expiry`` is ``UNEXPIRED``); a refused close, or any
refusal of a known question, reads the row and checks it again, so every
refusal a person sees is decided on the row as it stands.

Both are bounded maps that drop their oldest entry first.
"""

from __future__ import annotations

from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.questions.write import Written
from bot.stores.ports import Runs

# Enough for every run a busy process has in flight, and every question it has
# open; the oldest go first.
DEFAULT_KEPT = 1024


class KnownRuns:
    """A bounded map of run id to the run's record, for its origin only."""

    def __init__(self, runs: Runs, *, kept: int = DEFAULT_KEPT) -> None:
        self._runs = runs
        self._kept = kept
        self._known: dict[str, RunRecord] = {}

    def remember(self, run: RunRecord) -> None:
        if run.run_id not in self._known and len(self._known) >= self._kept:
            self._known.pop(next(iter(self._known)))
        self._known[run.run_id] = run

    async def origin(self, run_id: str) -> RunRecord | None:
        """The run as remembered, or as read now (then remembered); None if unknown."""
        known = self._known.get(run_id)
        if known is not None:
            return known
        run = await self._runs.get(run_id)
        if run is not None:
            self.remember(run)
        return run


class KnownQuestions:
    """A bounded map of question id to the question as this process last wrote it."""

    def __init__(self, *, kept: int = DEFAULT_KEPT) -> None:
        self._kept = kept
        self._known: dict[str, Question] = {}

    def saw(self, written: Written) -> None:
        """A lifecycle write went through: keep the question it left open, drop a closed one."""
        question = written.question
        if question is None:
            return
        if question.status is not QuestionStatus.OUTSTANDING:
            self._known.pop(question.interrupt_id, None)
            return
        if question.interrupt_id not in self._known and len(self._known) >= self._kept:
            self._known.pop(next(iter(self._known)))
        self._known[question.interrupt_id] = question

    def get(self, interrupt_id: str) -> Question | None:
        return self._known.get(interrupt_id)

    def forget(self, interrupt_id: str) -> None:
        """The kept copy did not carry an answer: read the row from now on."""
        self._known.pop(interrupt_id, None)
