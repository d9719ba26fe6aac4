"""A quorum's count of approvals with changes: proposals compared as JSON, and who may vote
again once an edit set their approval aside."""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.contract.answers import ApprovalDecision, answer_of
from bot.contract.models import Tally
from bot.questions.quorum import (
    cast,
    nudge_due_at,
    reminder_due,
    step_due,
    stored_policy,
    tally_of,
    tally_text,
)
from bot.questions.records import Question
from bot.questions.write import Ballot


def ballot(voter: str, decision: str = "approve", arguments: Any = None) -> Ballot:
    answer: dict[str, Any] = {"decision": decision}
    if arguments is not None:
        answer["arguments"] = arguments
    parsed = answer_of("approval", "answered", answer)
    assert isinstance(parsed, ApprovalDecision)
    return Ballot("int_1", voter, voter, decision, parsed, at=0.0)


def test_true_and_one_are_two_proposals() -> None:
    """Ana's ``{"dry_run": true}`` and Bo's ``{"dry_run": 1}`` are not one proposal: Bo's
    counts, Ana's is set aside (Python's ``True == 1`` would have counted both)."""
    counted = tally_of(
        (ballot("ana", "edit", {"dry_run": True}), ballot("bo", "edit", {"dry_run": 1}))
    )
    assert counted.approve == ["bo"]
    assert counted.superseded == ["ana"]
    assert counted.restarted


def test_one_proposal_whatever_its_key_order_or_number_spelling() -> None:
    """Key order and ``2`` against ``2.0`` do not make another proposal."""
    counted = tally_of(
        (
            ballot("ana", "edit", {"env": "prod", "replicas": 2}),
            ballot("bo", "edit", {"replicas": 2.0, "env": "prod"}),
        )
    )
    assert counted.approve == ["ana", "bo"] and not counted.superseded


def test_only_a_set_aside_approval_may_be_cast_again() -> None:
    """Ana's approval set aside by Bo's edit may be replaced; Bo's, which counts, and Carl's
    rejection may not; someone new simply votes."""
    before = (
        ballot("carl", "reject"),
        ballot("ana"),
        ballot("bo", "edit", {"env": "prod "}),
    )
    again = cast(before, ballot("ana", "edit", {"env": "prod "}))
    assert again is not None
    assert [(b.voter, b.decision) for b in again] == [
        ("carl", "reject"),
        ("bo", "edit"),
        ("ana", "edit"),
    ]
    assert tally_of(again).approve == ["bo", "ana"]
    assert cast(before, ballot("bo")) is None
    assert cast(before, ballot("carl")) is None
    assert cast(before, ballot("dan")) is not None


def test_a_set_aside_approval_is_cast_again_only_under_the_id_it_was_cast_with() -> None:
    """Ana's set-aside approval may be replaced from her own workspace, never from another:
    there her ballot would be a second row, and one person counts once."""
    before = (
        ballot("slack:T0TEST:U0ANA"),
        ballot("slack:T0TEST:U0BO", "edit", {"env": "prod "}),
    )
    assert cast(before, ballot("slack:T0OTHER:U0ANA", "edit", {"env": "prod "})) is None
    again = cast(before, ballot("slack:T0TEST:U0ANA", "edit", {"env": "prod "}))
    assert again is not None and len(tally_of(again).approve) == 2


def test_the_tally_line_names_who_may_answer_again() -> None:
    """Under a quorum the message says whose approval an edit set aside."""
    tally = Tally(
        approve=["bo"],
        superseded=["ana"],
        names={"ana": "ana", "bo": "bo"},
        changes='env "prod" → "prod "',
    )
    assert tally_text(tally, 2) == (
        '1 of 2 approved: @bo with changes (env "prod" → "prod "); '
        "approved other arguments, may answer again: @ana"
    )


def test_the_stored_due_time_is_when_the_pass_first_owes_a_nudge() -> None:
    """``nudge_due_at`` is the first moment ``step_due`` or ``reminder_due`` holds, at
    every count a question passes through; None once neither ever will."""
    policy = stored_policy(
        {
            "remind_after_seconds": 10,
            "max_reminders": 2,
            "escalate": [{"after_seconds": 15, "answerers": ["bob"]}],
        }
    )
    base = Question(
        interrupt_id="i1",
        run_id="r1",
        scope="s",
        name="approval",
        tool_call_id="c1",
        checkpoint_id="",
        payload={},
        issued_at=100.0,
        expires_at=1e9,
        policy=policy,
    )
    expected = {(0, 0): 110.0, (1, 0): 115.0, (1, 1): 120.0, (2, 1): None, (2, 0): 115.0}
    for (reminders, level), due in expected.items():
        question = dataclasses.replace(base, reminders=reminders, level=level)
        assert nudge_due_at(policy, 100.0, reminders=reminders, level=level) == due
        owed = [
            t
            for t in (99.0, 109.9, 110.0, 114.9, 115.0, 119.9, 120.0, 500.0)
            if step_due(question, t) is not None or reminder_due(question, t)
        ]
        assert (owed[0] if owed else None) == due
    assert nudge_due_at(None, 100.0, reminders=0, level=0) is None
