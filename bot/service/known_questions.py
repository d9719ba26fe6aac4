"""Questions this process asked lately, kept for what never changes about them.

A question's run, call, scope, interaction, payload and answerers are fixed
when it is asked: the redeemer checks an answer against those without
reading the row. What may change (closed, or its expiry moved) is checked by
the close itself (``Close.expiry`` is ``UNEXPIRED``); a refused close, or any
refusal of a known question, reads the row and checks it again, so every
refusal a person sees is decided on the row as it stands.
"""

from __future__ import annotations

from bot.questions.write import Written
from bot.stores.records import Question, QuestionStatus

# Enough for every question a busy process has open; the oldest go first.
DEFAULT_KEPT = 1024


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
