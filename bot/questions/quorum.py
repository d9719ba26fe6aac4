"""A question's approval policy, applied: who is its requester, when ballots decide it.

The policy is the wire model (``bot.contract.models.Policy``), stored on the
question as a dict with its defaults filled in, so every door and every
replica applies the same one. A question without one has the default:
the first answer decides, anyone admitted may answer, an expiry stores no
answer. A quorum counts the answers that carry a decision (approvals'):
``quorum`` distinct people must approve; one reject rejects, or as many as
the quorum when ``reject`` is ``"quorum"``.

An approval may be approved with changes (``edit``). Each approving ballot
votes for one set of arguments: ``approve`` for the original, ``edit`` for
its own, compared as canonical JSON (``bot/contract/json_values.py``: ``true``
is not ``1``, key order does not matter). Each person's latest ballot is
their vote. The proposal is what the latest approving ballot voted for, and
the approvals that count are those for the same arguments: the question
closes once ``quorum`` people approve one set of arguments. An approval of
other arguments is set aside (``superseded``), and that person may vote
again, their new ballot replacing the old; an approval that counts, or a
rejection, is cast once. A ``respond`` means the action does not run: it
counts as a rejection. docs/api.md states the rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from bot.contract.answers import Answer, ApprovalDecision, OtherAnswer
from bot.contract.decisions import APPROVING
from bot.contract.edits import diff_text
from bot.contract.identity import same_person
from bot.contract.json_values import canonical
from bot.contract.models import STORED, Policy, Tally
from bot.contract.payloads import ApprovalPayload
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.questions.write import Ballot

DEFAULT_POLICY = Policy()
# What an expiry stores when its policy fails closed: its JSON, and the typed answer.
EXPIRED_REJECTION = {"decision": "reject", "comment": "expired without an answer"}
_EXPIRED_REJECTED = ApprovalDecision.model_validate(EXPIRED_REJECTION)


def policy_of(question: Question) -> Policy:
    """The policy in force on ``question``."""
    return DEFAULT_POLICY if question.policy is None else question.policy


def stored_policy(value: Any) -> Policy | None:
    """A question's policy as its row stores it (a JSON object, or null), parsed once where
    the row becomes a ``Question``; None (and an empty object) is the default."""
    if not value:
        return None
    return Policy.model_validate(value, strict=False, context=STORED)


def filled(policy: Policy | None) -> dict[str, Any] | None:
    """``policy`` as the question stores it (None: the default, nothing stored)."""
    return None if policy is None else policy.model_dump(mode="json")


def shown(question: Question) -> dict[str, Any]:
    """The policy in force, defaults filled, as the question object shows it."""
    return policy_of(question).model_dump(mode="json")


def counts_votes(question: Question, answer: Answer | None) -> bool:
    """True when this answer is a ballot under a quorum rather than the deciding answer."""
    return policy_of(question).quorum > 1 and isinstance(answer, ApprovalDecision)


def requester_of(question: Question, run: RunRecord | None) -> str:
    """Who asked: the id the policy names, else the person who started the run."""
    named = policy_of(question).requester
    if named:
        return named
    return run.requester if run is not None else ""


def is_self_answer(question: Question, run: RunRecord | None, who: str) -> bool:
    """``who`` may not answer: the policy keeps the requester out and ``who`` is them."""
    if policy_of(question).requester_may_answer:
        return False
    requester = requester_of(question, run)
    # Compared as one person: no spelling of the requester (case, spaces, ``slack:`` or
    # bare, another workspace) gets them past this check.
    return same_person(who, requester)


@dataclass(frozen=True, slots=True)
class MayAnswer:
    """Who may answer one question besides admins and the members of ``groups``, as
    ``bot.service.answering.policy.RequesterOrApprovers.who_may_answer`` decides it.

    ``requester`` is empty when the rule leaves the requester out, the
    question's policy keeps them out, or no run is known. Sorted, so admin
    commands can show it as it is.
    """

    anyone: bool = False
    requester: str = ""
    people: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    approvers: tuple[str, ...] = ()

    def names(self, who: str) -> bool:
        """``who`` is admitted by id alone; group membership needs a ``Directory``."""
        return (
            self.anyone
            or any(same_person(who, approver) for approver in self.approvers)
            or same_person(who, self.requester)
            or any(same_person(who, person) for person in self.people)
        )

    def persons(self) -> tuple[str, ...]:
        """The requester (when admitted) and the people named, in the order shown."""
        requester = (self.requester,) if self.requester else ()
        return (*requester, *self.people)

    def named(self) -> tuple[str, ...]:
        """The requester, people and groups by id, as admin commands list them."""
        return (*self.persons(), *self.groups)


def cast_before(ballot: Ballot, ballots: tuple[Ballot, ...]) -> bool:
    """Another of ``ballots`` is the same person's as ``ballot``, under another id (the same
    Slack user clicking in another workspace): one person, one vote."""
    return any(
        other.voter != ballot.voter and same_person(other.voter, ballot.voter) for other in ballots
    )


def _counted(ballots: tuple[Ballot, ...]) -> Tally:
    """The ballots (each person's latest, in the order cast) counted by the rule in the
    module's docstring: the proposal approvals count for (None: the arguments as asked), the
    approvals that count for it, every rejection, and the approvals of other arguments,
    which no longer count and whose voters may vote again (``superseded``)."""
    approving = [b for b in ballots if b.decision in APPROVING]
    rejections = [b.voter for b in ballots if b.decision not in APPROVING]
    names = {b.voter: b.display for b in ballots}
    if not approving:
        return Tally(reject=rejections, names=names)
    latest = approving[-1]
    proposal = _voted_for(latest)
    wanted = _spelling(proposal)
    approvals = [b.voter for b in approving if _spelling(_voted_for(b)) == wanted]
    superseded = [b.voter for b in approving if _spelling(_voted_for(b)) != wanted]
    # The latest ballot made a new proposal after approvals for another.
    restarted = (
        ballots[-1] is latest
        and len(approving) > 1
        and _spelling(_voted_for(approving[-2])) != wanted
    )
    return Tally(
        approve=approvals,
        reject=rejections,
        names=names,
        superseded=superseded,
        restarted=restarted,
        proposal=dict(proposal) if proposal is not None else None,
    )


def _ballot_of(ballots: tuple[Ballot, ...], voter: str) -> Ballot:
    return next(b for b in ballots if b.voter == voter)


def _voted_for(ballot: Ballot) -> Mapping[str, Any] | None:
    """The arguments an approving ballot approves: its edit's, or None for those asked."""
    answer = ballot.answer
    if ballot.decision != "edit" or not isinstance(answer, ApprovalDecision):
        return None
    return answer.arguments


def _spelling(arguments: Mapping[str, Any] | None) -> str | None:
    if arguments is None:
        return None
    try:
        return canonical(arguments)
    except ValueError:
        # A ballot stored before such numbers were refused: compared as it was written.
        return json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)


def cast(ballots: tuple[Ballot, ...], ballot: Ballot) -> tuple[Ballot, ...] | None:
    """The ballots once ``ballot`` is cast: its voter's earlier ballot replaced when it is an
    approval of other arguments than the proposal (``superseded``); None when the voter's
    ballot on record still counts, or an earlier ballot is the same person's under another id
    (``cast_before``: that one is never replaced), and this one is refused."""
    if cast_before(ballot, ballots):
        return None
    voted = any(b.voter == ballot.voter for b in ballots)
    if voted and ballot.voter not in _counted(ballots).superseded:
        return None
    return (*(b for b in ballots if b.voter != ballot.voter), ballot)


def decided(question: Question, ballots: tuple[Ballot, ...]) -> str | None:
    """The decision once the ballots decide the question (``approve``, ``edit`` when the
    approvals are for edited arguments, ``reject``, or ``respond`` when the deciding
    rejection is one), else None."""
    policy = policy_of(question)
    counted = _counted(ballots)
    if len(counted.approve) >= policy.quorum:
        return "approve" if counted.proposal is None else "edit"
    if len(counted.reject) >= (1 if policy.reject == "any" else policy.quorum):
        last = _ballot_of(ballots, counted.reject[-1]).decision
        return "respond" if last == "respond" else "reject"
    return None


def tally_of(ballots: tuple[Ballot, ...], question: Question | None = None) -> Tally:
    """The ballots as the question's ``tally``: ids of the approvals that count and of the
    rejections in the order cast, names, and under an edited proposal its arguments and
    what they change (``changes``) and who approved an earlier one (``superseded``)."""
    counted = _counted(ballots)
    if counted.proposal is None:
        return counted
    asked = question.payload if question is not None else None
    original = asked.arguments if isinstance(asked, ApprovalPayload) else {}
    return counted.model_copy(update={"changes": diff_text(original, counted.proposal)})


def final_answer(
    decision: str, ballots: tuple[Ballot, ...], last: Ballot
) -> ApprovalDecision | OtherAnswer:
    """The deciding ballot's answer, with who decided it: ``approved_by`` or ``rejected_by``."""
    counted = _counted(ballots)
    approving = decision in APPROVING
    deciders = counted.approve if approving else counted.reject
    # The answer of a ballot among the deciders: an approval of edited arguments carries them.
    answer = _ballot_of(ballots, deciders[-1]).answer if deciders else last.answer
    decided = {"decision": decision, "approved_by" if approving else "rejected_by": list(deciders)}
    match answer:
        case ApprovalDecision():
            # Built from a parsed ballot and what the count found: nothing to check again.
            return answer.model_copy(update=decided)
        case OtherAnswer(values=values):
            return OtherAnswer({**values, **decided})
        case _:
            assert_never(answer)


def quorum_deciders(answer: Answer | None) -> list[str]:
    """Who decided an approval under a quorum, as its answer names them (``final_answer``):
    every approver of an approval, every rejecter of a rejection; none for any other answer."""
    match answer:
        case ApprovalDecision(decision="approve", approved_by=list() as deciders):
            return deciders
        case ApprovalDecision(decision="reject", rejected_by=list() as deciders):
            return deciders
        case _:
            return []


def people_text(names: Sequence[str]) -> str:
    """``"@ana"``, ``"@ana and @bo"``, ``"@a, @b and @c"``: every one of several people who
    closed a question together (a quorum's approvers), in the order they answered."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def decided_by(decision: str, ballots: tuple[Ballot, ...]) -> str:
    """Who decided, as the closed question names them (its ``closed_by``): every approver
    whose approval counts, or every rejecter, by display name in the order they answered
    ("ana and bo"), so each surface's "Approved by ..." names them all, not only the last."""
    counted = _counted(ballots)
    deciders = counted.approve if decision in APPROVING else counted.reject
    return people_text([counted.names[voter] for voter in deciders])


def expired_answer(question: Question) -> ApprovalDecision | None:
    """What an expiry stores as the answer: a rejection when the policy fails closed."""
    return _EXPIRED_REJECTED if policy_of(question).on_expire == "reject" else None


def rejected_on_expiry(question: Question) -> bool:
    """Whether ``question`` expired and its policy stored that as a rejection."""
    answer = question.answer
    expired = question.status is QuestionStatus.EXPIRED
    return expired and isinstance(answer, ApprovalDecision) and answer.decision == "reject"


def escalated_answerers(question: Question) -> tuple[str, ...]:
    """The answerers the escalation steps taken so far have added."""
    steps = policy_of(question).escalate[: question.level]
    return tuple(dict.fromkeys(who for step in steps for who in step.answerers))


def step_due(question: Question, now: float) -> int | None:
    """The level the next escalation step raises ``question`` to, once it is due; else None."""
    steps = policy_of(question).escalate
    level = question.level
    if level < len(steps) and now >= question.issued_at + steps[level].after_seconds:
        return level + 1
    return None


def reminder_due(question: Question, now: float) -> bool:
    """A reminder is due: every ``remind_after_seconds``, up to ``max_reminders``."""
    policy = policy_of(question)
    every, most = policy.remind_after_seconds, policy.max_reminders or 0
    if every is None or question.reminders >= most:
        return False
    return now >= question.issued_at + every * (question.reminders + 1)


def nudge_due_at(
    policy: Policy | None, issued_at: float, *, reminders: int, level: int
) -> float | None:
    """When a question's next reminder or escalation step falls due (``step_due`` and
    ``reminder_due`` say so from then on), given its policy, when it was issued and what it
    has counted; None when it owes none. Stored on its row and moved by each one counted,
    so the sweeper's pass reads only the questions due."""
    policy = DEFAULT_POLICY if policy is None else policy
    steps, every = policy.escalate, policy.remind_after_seconds
    due: list[float] = []
    if level < len(steps):
        due.append(issued_at + steps[level].after_seconds)
    if every is not None and reminders < (policy.max_reminders or 0):
        due.append(issued_at + every * (reminders + 1))
    return min(due, default=None)


def stored_tally(value: Any) -> Tally | None:
    """A question's tally as its row stores it (a JSON object, or null before the first
    vote), parsed once where the row becomes a ``Question``."""
    return None if value is None else Tally.model_validate(value)


def stored_tally_json(tally: Tally | None) -> dict[str, Any] | None:
    """``tally`` as the question's row holds it."""
    return None if tally is None else tally.stored()


def voters(question: Question) -> set[str]:
    """Who has a ballot that counts: not those whose approval an edit set aside, who may
    answer again."""
    return question.tally.voters() if question.tally is not None else set()


def tally_object(question: Question) -> dict[str, list[str]] | None:
    """The tally as the API's question object shows it: ids per decision under a quorum;
    None for a question without one, where no answer is counted (its one answer is its
    ``answered_by``)."""
    return tally_shown(question) if policy_of(question).quorum > 1 else None


def tally_shown(question: Question) -> dict[str, list[str]]:
    """The tally: ids per decision (empty lists before any vote, and without a quorum)."""
    tally = question.tally or Tally()
    return {"approve": list(tally.approve), "reject": list(tally.reject)}


def voter_names(tally: Tally | None) -> dict[str, str]:
    """The display name each voter's surface gave, by id: the names a question has seen."""
    return {voter: name for voter, name in (tally.names if tally else {}).items() if name}


def tally_line(question: Question, mention: Callable[[str, str], str] | None = None) -> str:
    """The question's tally as its message shows it (``tally_text``)."""
    return tally_text(question.tally, policy_of(question).quorum, mention)


def tally_text(
    tally: Tally | None,
    quorum: int,
    mention: Callable[[str, str], str] | None = None,
) -> str:
    """ "2 of 3 approved: @ana, @bo" while a quorum counts; "" otherwise.

    ``mention`` turns (id, display) into how the surface names a person;
    by default ``@display``.
    """
    if quorum <= 1:
        return ""
    tally = tally or Tally()

    def who(voter: str) -> str:
        display = tally.names.get(voter, voter)
        return mention(voter, display) if mention is not None else f"@{display}"

    line = f"{len(tally.approve)} of {quorum} approved"
    if tally.approve:
        line += ": " + ", ".join(who(v) for v in tally.approve)
    if tally.changes:
        line += f" with changes ({tally.changes})"
    if tally.reject:
        line += "; rejected by " + ", ".join(who(v) for v in tally.reject)
    if tally.superseded:
        line += "; approved other arguments, may answer again: " + ", ".join(
            who(v) for v in tally.superseded
        )
    return line
