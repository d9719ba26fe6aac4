"""A question's approval policy, applied: who is its requester, when ballots decide it.

The policy is the wire model (``bot.client.models.Policy``), stored on the
question as a dict with its defaults filled in, so every door and every
replica applies the same one. A question without one has the default:
the first answer decides, anyone admitted may answer, an expiry stores no
answer. A quorum counts the answers that carry a decision (approvals'):
``quorum`` distinct people must approve; one reject rejects, or as many as
the quorum when ``reject`` is ``"quorum"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot.client.identity import names
from bot.client.models import STORED, Policy
from bot.questions.records import Question, RunRecord
from bot.questions.write import Ballot

DEFAULT_POLICY = Policy()
EXPIRED_REJECTION = {"decision": "reject", "comment": "expired without an answer"}
DECISIONS = ("approve", "reject")


def policy_of(question: Question) -> Policy:
    """The policy in force on ``question``."""
    if not question.policy:
        return DEFAULT_POLICY
    return Policy.model_validate(question.policy, strict=False, context=STORED)


def filled(policy: Policy | None) -> dict[str, Any] | None:
    """``policy`` as the question stores it (None: the default, nothing stored)."""
    return None if policy is None else policy.model_dump(mode="json")


def shown(question: Question) -> dict[str, Any]:
    """The policy in force, defaults filled, as the question object shows it."""
    return policy_of(question).model_dump(mode="json")


def counts_votes(question: Question, answer: Mapping[str, Any]) -> bool:
    """True when this answer is a ballot under a quorum rather than the deciding answer."""
    return policy_of(question).quorum > 1 and answer.get("decision") in DECISIONS


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
    # Compared as one identity: no spelling of the requester (case, spaces,
    # ``slack:`` or bare) gets them past this check.
    return bool(requester) and names(who, requester)


def decided(question: Question, ballots: tuple[Ballot, ...]) -> str | None:
    """``"approve"`` or ``"reject"`` once the ballots decide the question, else None."""
    policy = policy_of(question)
    approvals = sum(1 for b in ballots if b.decision == "approve")
    rejections = sum(1 for b in ballots if b.decision == "reject")
    if approvals >= policy.quorum:
        return "approve"
    if rejections >= (1 if policy.reject == "any" else policy.quorum):
        return "reject"
    return None


def tally_of(ballots: tuple[Ballot, ...]) -> dict[str, Any]:
    """The ballots as the question's ``tally``: ids per decision in the order cast, names."""
    return {
        "approve": [b.voter for b in ballots if b.decision == "approve"],
        "reject": [b.voter for b in ballots if b.decision == "reject"],
        "names": {b.voter: b.display for b in ballots},
    }


def final_answer(decision: str, ballots: tuple[Ballot, ...], last: Ballot) -> dict[str, Any]:
    """The deciding ballot's answer, with who decided it: ``approved_by`` or ``rejected_by``."""
    answer = dict(last.answer)
    answer["decision"] = decision
    by = [b.voter for b in ballots if b.decision == decision]
    answer["approved_by" if decision == "approve" else "rejected_by"] = by
    return answer


def people_text(names: Sequence[str]) -> str:
    """``"@ana"``, ``"@ana and @bo"``, ``"@a, @b and @c"``: every one of several people who
    closed a question together (a quorum's approvers), in the order they answered."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def decided_by(decision: str, ballots: tuple[Ballot, ...]) -> str:
    """Who decided, as the closed question names them (its ``closed_by``): every approver,
    or every rejecter, by display name in the order they answered ("ana and bo"), so each
    surface's "Approved by ..." names them all, not only the last."""
    return people_text([b.display for b in ballots if b.decision == decision])


def expired_answer(question: Question) -> dict[str, Any] | None:
    """What an expiry stores as the answer: a rejection when the policy fails closed."""
    return dict(EXPIRED_REJECTION) if policy_of(question).on_expire == "reject" else None


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


def voters(question: Question) -> set[str]:
    tally = question.tally or {}
    return {*tally.get("approve", ()), *tally.get("reject", ())}


def tally_object(question: Question) -> dict[str, list[str]] | None:
    """The tally as the API's question object shows it: ids per decision under a quorum;
    None for a question without one, where no answer is counted (its one answer is its
    ``answered_by``)."""
    return tally_shown(question) if policy_of(question).quorum > 1 else None


def tally_shown(question: Question) -> dict[str, list[str]]:
    """The tally: ids per decision (empty lists before any vote, and without a quorum)."""
    tally = question.tally or {}
    return {"approve": list(tally.get("approve", ())), "reject": list(tally.get("reject", ()))}


def tally_line(question: Question, mention: Callable[[str, str], str] | None = None) -> str:
    """The question's tally as its message shows it (``tally_text``)."""
    return tally_text(question.tally, policy_of(question).quorum, mention)


def tally_text(
    tally: Mapping[str, Any] | None,
    quorum: int,
    mention: Callable[[str, str], str] | None = None,
) -> str:
    """ "2 of 3 approved: @ana, @bo" while a quorum counts; "" otherwise.

    ``mention`` turns (id, display) into how the surface names a person;
    by default ``@display``.
    """
    if quorum <= 1:
        return ""
    tally = tally or {}
    names: Mapping[str, str] = tally.get("names", {})

    def who(voter: str) -> str:
        display = names.get(voter, voter)
        return mention(voter, display) if mention is not None else f"@{display}"

    approvals = list(tally.get("approve", ()))
    line = f"{len(approvals)} of {quorum} approved"
    if approvals:
        line += ": " + ", ".join(who(v) for v in approvals)
    rejections = list(tally.get("reject", ()))
    if rejections:
        line += "; rejected by " + ", ".join(who(v) for v in rejections)
    return line
