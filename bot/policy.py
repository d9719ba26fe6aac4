"""Who may answer a question: the decision every surface defers to."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from bot.outcomes import Responder
from bot.stores.records import PauseRecord, RunRecord

AnswerPolicy = Callable[[PauseRecord, RunRecord | None, Responder], bool]


@dataclass(frozen=True, slots=True)
class RequesterOrApprovers:
    """The person who started the run, admins, and any named approver.

    ``anyone`` opens every question to everyone in the scope, for teams
    that triage together; it is off by default.
    """

    approvers: Collection[str] = field(default_factory=frozenset)
    anyone: bool = False

    def __call__(self, record: PauseRecord, run: RunRecord | None, who: Responder) -> bool:
        if self.anyone or who.is_admin or who.id in self.approvers:
            return True
        return run is not None and run.requester == who.id
