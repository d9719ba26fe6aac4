"""What surfaces redraw from the store: a conversation's runs, their questions, open tokens.

Tokens are never stored: signing is deterministic, so an open question's
token is re-derived from its row. The token a pause just signed is kept for
its question's first post (whose outbox row carries the question), so that
post needs neither a read nor a signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.human.capability import HumanInteractionCapability, InteractionRegistration
from bot.human.pause_event import claims_for
from bot.human.tokens import MintedToken
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.stores.ports import Stores

# Tokens kept between a pause and its question's first post, at most.
ASKED_KEPT = 256


@dataclass(frozen=True, slots=True)
class RunWithQuestions:
    """A run and the questions it asked, as a surface redraws them.

    ``tokens`` holds the token of each question still open (by interrupt id),
    re-derived from its row: the questions themselves are the bridge's records.
    """

    run: RunRecord
    questions: tuple[Question, ...] = ()
    tokens: Mapping[str, str] = field(default_factory=dict)

    def token_of(self, question: Question) -> str:
        """The token that answers ``question``; "" once it closed."""
        if question.status is not QuestionStatus.OUTSTANDING:
            return ""
        return self.tokens.get(question.interrupt_id, "")


class Redraws:
    """What surfaces redraw from the store: runs with their questions, tokens re-derived."""

    def __init__(self, capability: HumanInteractionCapability, stores: Stores) -> None:
        self._capability = capability
        self._stores = stores
        # By interrupt id: the token a pause signed, and the expiry it was signed for.
        self._asked: dict[str, tuple[str, float]] = {}

    async def history(self, surface: str, key: str, *, limit: int = 50) -> list[RunWithQuestions]:
        """A conversation's runs with their questions, oldest first."""
        runs = await self._stores.runs.in_conversation(surface, key, limit=limit)
        pauses = await self._stores.ledger.for_runs([run.run_id for run in runs])
        by_run: dict[str, list[Question]] = {}
        tokens: dict[str, dict[str, str]] = {}
        for record in pauses:
            by_run.setdefault(record.run_id, []).append(record)
            if record.status is QuestionStatus.OUTSTANDING:
                tokens.setdefault(record.run_id, {})[record.interrupt_id] = self.token_for(record)
        return [
            RunWithQuestions(run, tuple(by_run.get(run.run_id, ())), tokens.get(run.run_id, {}))
            for run in runs
        ]

    def token_for(self, record: Question) -> str:
        """The token of an outstanding question, re-derived (tokens are never stored)."""
        return self._capability.signer.encode(MintedToken(claims_for(record)))

    def drawn_token(self, record: Question) -> str:
        """The token an outstanding question is drawn with: the one its pause signed, on its
        first post, else re-derived from the row."""
        asked = self._asked.pop(record.interrupt_id, None)
        # An extended question has a new expiry, so the token signed at the pause is stale.
        if asked is not None and asked[1] == record.expires_at:
            return asked[0]
        return self.token_for(record)

    def remember_asked(self, interrupt_id: str, token: str, *, expires_at: float) -> None:
        """Keep the token a pause just signed (for ``expires_at``), for its question's first
        post. Bounded, since another process may be the one that posts it."""
        if len(self._asked) >= ASKED_KEPT:
            self._asked.pop(next(iter(self._asked)))
        self._asked[interrupt_id] = (token, expires_at)

    def registration(self, name: str) -> InteractionRegistration | None:
        """The interaction a question was asked under (its answer's schema), for a surface."""
        return self._capability.registration(name)
