"""The hand-off vouches only for what it holds; everything else is left to the claim."""

from __future__ import annotations

from bot.contract.payloads import payload_of
from bot.questions.records import DeliveryKind, OutboxRow, Question
from bot.questions.write import Owed
from bot.service.delivering.owed import OwedRows


def owed(
    delivery_id: int, *, run_id: str = "r1", earlier: tuple[int, ...] = (), question: str = "q1"
) -> Owed:
    asked = Question(
        interrupt_id=question,
        run_id=run_id,
        scope="T1",
        name="ask_user",
        tool_call_id="c1",
        checkpoint_id="r1:1",
        payload=payload_of("ask_user", {}),
        issued_at=1.0,
        expires_at=99.0,
    )
    row = OutboxRow(delivery_id, run_id, "slack", DeliveryKind.PUBLISH, question, pause=asked)
    return Owed(row, "me", 60.0, earlier)


def test_a_full_hand_off_leaves_new_rows_to_the_claim() -> None:
    handoff = OwedRows(limit=1)
    handoff.owe_all([owed(1)])
    handoff.owe_all([owed(2, run_id="r2")])
    rows, claim = handoff.take("me", 10.0)
    assert ([r.delivery_id for r in rows], claim) == ([1], True)


def test_a_row_whose_born_claim_ran_out_is_given_back() -> None:
    handoff = OwedRows()
    handoff.owe_all([owed(1)])
    assert handoff.take("me", 60.0) == ([], True)
    handoff.owe_all([owed(2, earlier=(1,))])  # its older row is no longer in hand
    assert handoff.take("me", 10.0) == ([], True)


def test_a_row_owed_behind_one_in_hand_is_handed_over_without_its_copy() -> None:
    """The older row's delivery may change the question (its message reference)."""
    handoff = OwedRows()
    handoff.owe_all([owed(1)])
    handoff.owe_all([owed(2, earlier=(1,), question="q2")])
    rows, claim = handoff.take("me", 10.0)
    assert [(r.delivery_id, r.pause is not None) for r in rows] == [(1, True), (2, False)]
    assert not claim


def test_an_admin_change_to_the_question_flags_the_rows_in_hand() -> None:
    """As a claim would: ``followed``, and the question is read again when delivered."""
    handoff = OwedRows()
    handoff.owe_all([owed(1)])
    handoff.owe_all([owed(2, earlier=(1,))])  # a redraw of the same question, owed behind it
    (row, redraw), claim = handoff.take("me", 10.0)
    assert (row.followed, row.pause, claim) == (True, None, False)
    assert redraw.delivery_id == 2


def test_a_held_back_run_keeps_its_later_rows_for_the_claim() -> None:
    handoff = OwedRows()
    handoff.owe_all([owed(1)])
    (first,), _ = handoff.take("me", 10.0)
    handoff.owe_all([owed(2, earlier=(1,))])
    handoff.owe_all([owed(3, run_id="r2")])
    handoff.hold_back("r1")
    handoff.settle(first.delivery_id, pending=True)
    rows, _ = handoff.take("me", 10.0)
    assert [r.delivery_id for r in rows] == [3]
    handoff.owe_all([owed(4, earlier=(1, 2))])  # neither older row is in hand any more
    assert handoff.take("me", 10.0) == ([], True)


def test_a_row_behind_one_just_delivered_is_handed_over() -> None:
    """A write whose snapshot still saw the older row pending (it raced the delivery's
    mark) is behind nothing once that row is settled as delivered."""
    handoff = OwedRows()
    handoff.owe_all([owed(1)])
    (first,), _ = handoff.take("me", 10.0)
    handoff.settle(first.delivery_id)
    handoff.owe_all([owed(2, earlier=(1,), question="q2")])
    rows, claim = handoff.take("me", 10.0)
    assert ([r.delivery_id for r in rows], claim) == ([2], False)


def test_a_row_a_claim_delivered_first_is_not_handed_over_again() -> None:
    """PostgreSQL: a claim may see the row committed before its write hands it over."""
    handoff = OwedRows()
    handoff.settle(1)  # delivered by a claim
    handoff.owe_all([owed(1)])
    assert handoff.take("me", 10.0) == ([], False)


def test_a_take_hands_out_a_batch_and_keeps_the_rest_in_order() -> None:
    handoff = OwedRows()
    for delivery_id in (1, 2, 3):
        handoff.owe_all([owed(delivery_id, run_id=f"r{delivery_id}", question=f"q{delivery_id}")])
    first, _ = handoff.take("me", 10.0, limit=2)
    second, _ = handoff.take("me", 10.0, limit=2)
    assert ([r.delivery_id for r in first], [r.delivery_id for r in second]) == ([1, 2], [3])
