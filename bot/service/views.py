"""What surfaces redraw from the store: a conversation's runs, their questions, open tokens.

Tokens are never stored: signing is deterministic, so an open question's
token is re-derived from its row. A question a pause just asked is kept for
its first post, so that post needs neither a read nor a signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.human.capability import HumanInteractionCapability, InteractionRegistration
from bot.human.pause_event import claims_for, pending_interrupt
from bot.human.tokens import MintedToken
from bot.kernel.interrupts import PendingInterrupt
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.stores.ports import Stores

# Questions kept between a pause and its first post, at most.
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
        self._asked: dict[str, PendingInterrupt] = {}

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

    def interrupt_for(self, record: Question) -> PendingInterrupt:
        """An outstanding ledger row as the pending interrupt a surface posts."""
        asked = self._asked.pop(record.interrupt_id, None)
        # An extended question has a new expiry, so the token signed at the pause is stale.
        fresh = asked is not None and asked.expires_at == record.expires_at
        token = asked.token if asked is not None and fresh else self.token_for(record)
        return pending_interrupt(record, token=token, resumable=True)

    def remember_asked(self, interrupt: PendingInterrupt) -> None:
        """Keep the question a pause just asked, for its first post: the token is
        signed and the ledger row need not be read again. Bounded, since another
        process may be the one that posts it."""
        if len(self._asked) >= ASKED_KEPT:
            self._asked.pop(next(iter(self._asked)))
        self._asked[interrupt.interrupt_id] = interrupt

    def just_asked(self, interrupt_id: str) -> PendingInterrupt | None:
        return self._asked.pop(interrupt_id, None)

    def registration(self, name: str) -> InteractionRegistration | None:
        """The interaction a question was asked under (its answer's schema), for a surface."""
        return self._capability.registration(name)
