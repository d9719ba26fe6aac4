"""Reminders and escalation steps: the sweeper's pass over questions with a policy.

After ``remind_after_seconds`` (and every as long again, up to
``max_reminders``) an outstanding question owes one threaded reminder that
mentions those who may answer and have not; after ``escalate[i].after_seconds``
the step's answerers are added (``bot.service.answering.policy`` admits them), pinged once in a
threaded message, audited ``escalated``, and the question's ``level`` becomes
``i + 1``. Each is counted on the question in the write that owes its message,
guarded by the count it read, so racing sweepers on several replicas send it
once. A closed question owes nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.contract.identity import same_person
from bot.questions import quorum
from bot.questions.lifecycle import Lifecycle
from bot.questions.records import Question, RunRecord
from bot.service.answering.policy import RequesterOrApprovers, answerers_from
from bot.service.running.known import KnownRuns
from bot.stores.ports import Stores

# Questions read at a time: the pass reads only what is due, however many are open.
BATCH = 100


class Nudges:
    """One pass: at most one reminder or escalation step per question."""

    def __init__(
        self, stores: Stores, lifecycle: Lifecycle, policy: object, known: KnownRuns
    ) -> None:
        self._stores = stores
        self._lifecycle = lifecycle
        # Who may answer, as the reminder names them: the deployment's rule when it is one.
        self._policy = (
            policy if isinstance(policy, RequesterOrApprovers) else RequesterOrApprovers()
        )
        self._known = known

    async def sweep(self, now: float) -> int:
        """Owe what is due; the number of reminders and escalation steps owed."""
        count, seen = 0, set[str]()
        while True:
            # The questions due, a batch at a time. Each one counted moves its due time on,
            # maybe to a time still past for its next step: that one is the next pass's, so
            # a batch can hold questions seen already; none new means the pass is done.
            due = await self._stores.ledger.nudges_due(now, limit=BATCH)
            new = [q for q in due if q.interrupt_id not in seen]
            seen.update(q.interrupt_id for q in new)
            for question in new:
                count += await self._owe(question, now)
            if len(due) < BATCH or not new:
                return count

    async def _owe(self, question: Question, now: float) -> bool:
        """Owe ``question``'s reminder or escalation step due by ``now``; False when none is
        or another sweeper counted it first."""
        level = quorum.step_due(question, now)
        if level is not None:
            step = quorum.policy_of(question).escalate[level - 1]
            body = _named(step.answerers, skip=quorum.voters(question))
        elif quorum.reminder_due(question, now):
            level = question.level
            body = self._waiting_on(question, await self._known.origin(question.run_id))
        else:
            return False
        return await self._lifecycle.nudge(question, at=now, level=level, body=body) is not None

    def _waiting_on(self, question: Question, run: RunRecord | None) -> dict[str, Any]:
        """Who may answer and has not, as the reminder mentions them."""
        may = self._policy.who_may_answer(question, run.requester if run is not None else "")
        requester = [may.requester] if may.requester else []
        words = [*requester, *may.people, *(f"group:{g}" for g in may.groups)]
        if may.anyone:
            words.append("anyone")
        return _named(words, skip=quorum.voters(question))


def _named(words: Sequence[str], *, skip: set[str]) -> dict[str, Any]:
    """People (less those who answered, compared as people), groups, anyone."""
    rule = answerers_from(list(words))
    people = [p for p in sorted(rule.people) if not any(same_person(v, p) for v in skip)]
    return {"people": people, "groups": sorted(rule.groups), "anyone": rule.anyone}
