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
        count = 0
        for question in await self._stores.ledger.with_policies():
            if question.policy is None:
                continue
            level = quorum.step_due(question, now)
            if level is not None:
                step = quorum.policy_of(question).escalate[level - 1]
                body = _named(step.answerers, skip=quorum.voters(question))
            elif quorum.reminder_due(question, now):
                level = question.level
                body = self._waiting_on(question, await self._known.origin(question.run_id))
            else:
                continue
            if await self._lifecycle.nudge(question, at=now, level=level, body=body) is not None:
                count += 1
        return count

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
