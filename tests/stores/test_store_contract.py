"""The contract every store backend keeps, run against SQLite and PostgreSQL alike."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot.contract.answers import OtherAnswer
from bot.contract.payloads import payload_of
from bot.questions.quorum import stored_policy
from bot.questions.records import (
    MAX_CROSS_SCOPE_KEPT,
    CrossScopeAttempt,
    DeliveryKind,
    DeliveryState,
)
from bot.questions.write import Delivered
from bot.service.delivering.owed import OwedRows
from bot.stores import (
    AuditEvent,
    Closing,
    ConversationSummary,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
    Stores,
)
from tests.support import Steps, steps


def pause(interrupt_id: str = "i1", **changes: Any) -> Question:
    record = Question(
        interrupt_id=interrupt_id,
        run_id="run-1",
        scope="team-a",
        name="approve_deploy",
        tool_call_id=f"call-{interrupt_id}",
        checkpoint_id="run-1:1",
        payload=payload_of("approve_deploy", {"question": "Deploy?", "options": ["yes", "no"]}),
        issued_at=100.0,
        expires_at=200.0,
    )
    if isinstance(changes.get("payload"), dict):  # asked as its JSON, parsed as a row is
        changes["payload"] = payload_of(changes.get("name", record.name), changes["payload"])
    return dataclasses.replace(record, **changes)


def closing(by: str = "alice", at: float = 150.0) -> Closing:
    return Closing(
        status=QuestionStatus.ANSWERED, by=by, at=at, answer=OtherAnswer({"choice": "yes"})
    )


def run(run_id: str = "run-1", created_at: float = 1.0) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        scope="team-a",
        surface="slack",
        requester="alice",
        text="deploy the thing",
        created_at=created_at,
        conversation={"channel": "C1", "thread": "T1"},
    )


def said(
    run_id: str, key: str, created_at: float, *, surface: str = "console", text: str = ""
) -> RunRecord:
    """A run started in conversation ``key`` of ``surface``, saying ``text``."""
    return dataclasses.replace(
        run(run_id, created_at),
        surface=surface,
        text=text or f"said {run_id}",
        updated_at=created_at,
        conversation={"key": key, "thread": "", "reference": {}},
    )


async def test_issue_then_get_returns_every_field(stores: Stores) -> None:
    """A pause read back equals the one issued, every field included."""
    record = pause(
        root_run_id="root-1",
        session_id="sess-1",
        thread_id="thread-1",
        status=QuestionStatus.ANSWERED,
        answer=OtherAnswer({"choice": "no", "note": "ünïcode"}),
        closed_by="bob",
        closed_at=150.5,
        resumed_at=160.25,
        message_ref={"channel": "C1", "ts": "1.2"},
        cross_scope_attempts=(
            CrossScopeAttempt("b", "eve", 120.0),
            CrossScopeAttempt("c", "mal", 121.5),
        ),
    )
    await steps(stores).issue(record)
    assert await stores.ledger.get("i1") == record
    assert await stores.ledger.get("nope") is None


async def test_asking_an_existing_id_again_writes_nothing(stores: Stores) -> None:
    """A question id is asked once: a second ask of it changes nor owes anything."""
    await steps(stores).start(run())
    lifecycle = steps(stores).lifecycle
    assert await lifecycle.ask(pause("a")) is not None
    assert await lifecycle.ask(pause("a", payload={"question": "Again?"})) is None
    assert await stores.ledger.get("a") == pause("a")
    assert [d.kind for d in await stores.outbox.of_run("run-1")] == [DeliveryKind.PUBLISH]


async def test_set_message_ref_is_stored(stores: Stores) -> None:
    """set_message_ref records where the question was posted."""
    await steps(stores).issue(pause())
    await steps(stores).set_message_ref("i1", {"channel": "C9", "ts": "42.1"})
    row = await stores.ledger.get("i1")
    assert row is not None
    assert row.message_ref == {"channel": "C9", "ts": "42.1"}


async def test_record_cross_scope_keeps_order(stores: Stores) -> None:
    """Cross-scope attempts come back in the order they were recorded."""
    await steps(stores).issue(pause())
    attempts = [CrossScopeAttempt("other", f"user-{n}", float(n)) for n in (3, 1, 2)]
    for attempt in attempts:
        await steps(stores).record_cross_scope("i1", attempt)
    row = await stores.ledger.get("i1")
    assert row is not None
    assert row.cross_scope_attempts == tuple(attempts)


async def test_updates_to_unknown_ids_raise_key_error(stores: Stores) -> None:
    """Updating a pause that was never written raises KeyError; ending an unknown run is a no."""
    with pytest.raises(KeyError):
        await steps(stores).set_message_ref("ghost", {"ts": "1"})
    with pytest.raises(KeyError):
        await steps(stores).record_cross_scope("ghost", CrossScopeAttempt("b", "eve", 1.0))
    assert not await steps(stores).finish("ghost", RunStatus.FAILED, at=1.0, text="")


async def test_spend_closes_an_outstanding_pause_exactly_once(stores: Stores) -> None:
    """The first spend closes the row and wins; a second spend and an unknown id lose."""
    await steps(stores).issue(pause())
    assert await steps(stores).spend("i1", closing("alice", 150.0)) is True
    assert await steps(stores).spend("i1", closing("bob", 151.0)) is False
    assert await steps(stores).spend("unknown", closing()) is False
    row = await stores.ledger.get("i1")
    assert row is not None
    assert (row.status, row.answer, row.closed_by, row.closed_at) == (
        QuestionStatus.ANSWERED,
        OtherAnswer({"choice": "yes"}),
        "alice",
        150.0,
    )


async def test_spend_leaves_a_closed_pause_alone(stores: Stores) -> None:
    """Spending a pause that is no longer outstanding fails and changes nothing."""
    expired = pause(status=QuestionStatus.EXPIRED, closed_by="sweeper", closed_at=201.0)
    await steps(stores).issue(expired)
    assert await steps(stores).spend("i1", closing()) is False
    assert await stores.ledger.get("i1") == expired


async def test_a_new_question_marks_the_runs_closed_pauses_resumed(stores: Stores) -> None:
    """Closed pauses stay unresumed until their run is continued (next question or end)."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("x", run_id="r1"))
    assert await steps(stores).spend("x", closing())
    assert (await _get(stores, "x")).resumed_at is None
    assert await steps(stores).finish("r1", RunStatus.COMPLETED, at=300.0, text="done")
    assert (await _get(stores, "x")).resumed_at == 300.0


async def test_a_lease_is_held_by_one_owner_until_it_lapses(stores: Stores) -> None:
    """Only a RUNNING run can be leased; one owner at a time until the lease lapses or is freed."""
    await steps(stores).start(run("r1"))
    assert await stores.leases.acquire("r1", "a", now=10.0, until=40.0)
    assert not await stores.leases.acquire("r1", "b", now=20.0, until=50.0)
    assert await stores.leases.acquire("r1", "a", now=20.0, until=50.0)  # ours: extended
    assert await stores.leases.lapsed(30.0) == []
    assert await stores.leases.lapsed(50.0) == ["r1"]
    assert not await stores.leases.renew("r1", "b", until=90.0)
    assert await stores.leases.renew("r1", "a", until=90.0)
    assert await stores.leases.lapsed(60.0) == []
    await stores.leases.release("r1", "b")  # not b's: nothing changes
    assert await stores.leases.lapsed(60.0) == []
    await stores.leases.release("r1", "a")
    assert await stores.leases.lapsed(60.0) == ["r1"]
    assert await stores.leases.acquire("r1", "b", now=60.0, until=90.0)
    assert await stores.leases.acquire("r1", "c", now=91.0, until=120.0)  # b's lapsed
    assert not await stores.leases.acquire("nope", "a", now=0.0, until=1.0)


async def test_only_running_runs_can_be_leased(stores: Stores) -> None:
    """A paused or finished run is owed no work, so nobody leases or recovers it."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    assert (await stores.runs.get("r1")).status is RunStatus.PAUSED  # type: ignore[union-attr]
    assert not await stores.leases.acquire("r1", "a", now=0.0, until=30.0)
    assert await stores.leases.lapsed(1e9) == []


async def test_issuing_a_pause_pauses_its_run_and_owes_the_post(stores: Stores) -> None:
    """One write: the row, its audit, the run PAUSED, earlier closes resumed, a publish owed."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    assert await steps(stores).spend("q1", closing())
    await steps(stores).issue(pause("q2", run_id="r1", issued_at=170.0))
    first = await stores.ledger.get("q1")
    assert first is not None
    assert first.resumed_at == 170.0
    asked = [e.interrupt_id for e in await stores.audit.recent(run_id="r1") if e.kind == "paused"]
    assert asked == ["q2", "q1"]
    kinds = [(d.kind, d.interrupt_id) for d in await stores.outbox.of_run("r1")]
    assert kinds == [
        (DeliveryKind.PUBLISH, "q1"),
        (DeliveryKind.CLOSED, "q1"),
        (DeliveryKind.PUBLISH, "q2"),
    ]


async def test_a_spend_owes_the_resume_the_edit_and_the_audit(stores: Stores) -> None:
    """One write: the pause closed, the run RUNNING again, the close audited, the edit owed."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    spent = dataclasses.replace(closing(), by_id="slack:T1:U1")
    assert await steps(stores).spend("q1", spent)
    row = await stores.runs.get("r1")
    assert row is not None
    assert row.status is RunStatus.RUNNING
    closed = await stores.ledger.get("q1")
    assert closed is not None
    assert closed.closed_by_id == "slack:T1:U1"
    events = await stores.audit.recent(run_id="r1")
    assert [(e.kind, e.actor, e.interrupt_id) for e in events] == [
        ("answered", "slack:T1:U1", "q1"),
        ("paused", "", "q1"),
        ("started", "alice", ""),
    ]
    assert [d.kind for d in await stores.outbox.of_run("r1")][-1] is DeliveryKind.CLOSED


async def test_a_close_that_leases_the_resume_reads_the_paused_turn(stores: Stores) -> None:
    """The closer that will resume reads, in the close's own write, what a resume reads."""
    lifecycle = steps(stores).lifecycle
    await lifecycle.start(run("r1"))
    await lifecycle.ask(pause("q1", run_id="r1", checkpoint_id="ck-1"), turn_state={"round": 1})
    await lifecycle.ask(pause("q2", run_id="r1", checkpoint_id="gone"))
    await stores.journal.record("r1", "model:1", {"text": "", "calls": []})
    await stores.journal.record("r1", "tool:c1", "done")
    leased = dataclasses.replace(closing(), lease_owner="me", lease_until=180.0)
    written = await lifecycle.close("q1", leased)
    assert written is not None
    assert written.turn is not None
    assert written.turn.state == {"round": 1}
    assert written.turn.journal == {"model:1": {"text": "", "calls": []}, "tool:c1": "done"}
    missing = await lifecycle.close("q2", leased)
    assert missing is not None
    assert missing.turn is not None
    assert missing.turn.state is None
    # A close nobody resumes from here (an admin shell's) reads nothing more.
    await lifecycle.ask(pause("q3", run_id="r1", checkpoint_id="ck-1"))
    unleased = await lifecycle.close("q3", closing())
    assert unleased is not None
    assert unleased.turn is None


async def test_a_start_reads_its_conversations_latest_runs_with_its_write(
    stores: Stores,
) -> None:
    """``history``: the conversation's latest runs come back with the start, oldest first."""
    lifecycle = steps(stores).lifecycle
    for n in range(4):
        assert await lifecycle.start(said(f"r{n}", "conv", float(n + 1)))
    await lifecycle.start(said("elsewhere", "other", 9.0))
    written = await lifecycle.start(said("r4", "conv", 10.0), history=3)
    assert written is not None
    # The started run itself may be among them (SQLite reads after its insert).
    runs = [run.run_id for run in written.earlier]
    assert runs in (["r1", "r2", "r3"], ["r2", "r3", "r4"])
    assert [run.text for run in written.earlier] == [f"said {run_id}" for run_id in runs]
    alone = await lifecycle.start(said("r5", "conv", 11.0))
    assert alone is not None and alone.earlier == ()


async def test_finish_ends_a_running_run_once_and_owes_the_outcome(stores: Stores) -> None:
    """A replayed ending changes nothing and owes nothing twice."""
    await steps(stores).start(run("r1"))
    assert await stores.leases.acquire("r1", "a", now=0.0, until=30.0)
    assert await steps(stores).finish("r1", RunStatus.COMPLETED, at=5.0, text="done")
    assert not await steps(stores).finish("r1", RunStatus.COMPLETED, at=6.0, text="done")
    row = await stores.runs.get("r1")
    assert row is not None
    assert (row.status, row.final_text, row.lease_owner, row.lease_until) == (
        RunStatus.COMPLETED,
        "done",
        "",
        None,
    )
    outcomes = [d.body for d in await stores.outbox.of_run("r1")]
    assert outcomes == [{"text": "done", "failed": False}]
    assert [e.kind for e in await stores.audit.recent(run_id="r1")] == ["completed", "started"]


async def test_the_journal_keeps_the_first_record_of_a_step(stores: Stores) -> None:
    """A step recorded twice (a replay racing a late writer) keeps its first value."""
    await stores.journal.record("r1", "model:1", {"text": "a", "calls": []})
    await stores.journal.record("r1", "model:1", {"text": "b", "calls": []})
    await stores.journal.record("r1", "tool:c1", "result")
    await stores.journal.record("r2", "tool:c1", "other run")
    assert await stores.journal.steps("r1") == {
        "model:1": {"text": "a", "calls": []},
        "tool:c1": "result",
    }
    assert await stores.journal.steps("nobody") == {}


async def test_the_outbox_hands_out_a_runs_messages_in_order(stores: Stores) -> None:
    """Claims take the oldest due row per run; a retry holds the run's later rows back."""
    await steps(stores).start(run("r1"))
    await steps(stores).start(run("r2"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    await steps(stores).issue(pause("q2", run_id="r2"))
    assert await steps(stores).spend("q1", closing())
    first = await stores.outbox.claim(200.0, until=260.0, owner="me", surfaces=["slack"])
    # ``followed``: r1's close is owed behind its post, so delivering the post makes it due.
    assert [(d.run_id, d.kind, d.followed) for d in first] == [
        ("r1", DeliveryKind.PUBLISH, True),
        ("r2", DeliveryKind.PUBLISH, False),
    ]
    assert await stores.outbox.claim(200.0, until=260.0, owner="other", surfaces=["slack"]) == []
    assert await stores.outbox.claim(200.0, until=260.0, owner="me", surfaces=["teams"]) == []
    r1, r2 = first
    await stores.outbox.retry(r1.delivery_id, next_at=230.0, error="ratelimited")
    await steps(stores).delivered(r2.delivery_id, at=201.0, message_ref={"ts": "1.2"})
    assert await stores.outbox.claim(210.0, until=270.0, owner="me", surfaces=["slack"]) == []
    again = await stores.outbox.claim(230.0, until=290.0, owner="me", surfaces=["slack"])
    assert [(d.run_id, d.kind, d.attempts, d.last_error) for d in again] == [
        ("r1", DeliveryKind.PUBLISH, 1, "ratelimited")
    ]
    await steps(stores).delivered(again[0].delivery_id, at=231.0, message_ref={"ts": "9.9"})
    closed = await stores.outbox.claim(232.0, until=290.0, owner="me", surfaces=["slack"])
    assert [(d.run_id, d.kind, d.followed) for d in closed] == [("r1", DeliveryKind.CLOSED, False)]
    posted = await stores.ledger.get("q2")
    assert posted is not None
    assert posted.message_ref == {"ts": "1.2"}


async def test_a_pass_of_marks_keeps_the_latest_post_of_a_question_and_leaves_edits_be(
    stores: Stores,
) -> None:
    """Marks written in one pass: rows that left no reference change no question, and of
    two first-route posts of one question (the first and a repost) the later one stands."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    (posted,) = await stores.outbox.claim(200.0, until=260.0, owner="me", surfaces=["slack"])
    await steps(stores).delivered(posted.delivery_id, at=201.0, message_ref={"ts": "1.1"})
    assert await steps(stores).repost("q1", at=202.0, actor="root") is not None
    again = await stores.outbox.claim(203.0, until=260.0, owner="me", surfaces=["slack"])
    assert [d.kind for d in again] == [DeliveryKind.PUBLISH]
    (repost,) = again
    await steps(stores).delivered_all(
        [
            Delivered(posted.delivery_id, 204.0, {"ts": "0.0"}),  # a stale repeat of the first
            Delivered(repost.delivery_id, 204.0, {"ts": "2.2"}),
        ]
    )
    record = await stores.ledger.get("q1")
    assert record is not None and record.message_ref == {"ts": "2.2"}
    moved = await stores.outbox.claim(205.0, until=260.0, owner="me", surfaces=["slack"])
    assert [d.kind for d in moved] == [DeliveryKind.MOVED]
    await steps(stores).delivered_all([Delivered(moved[0].delivery_id, 206.0)])
    record = await stores.ledger.get("q1")
    assert record is not None and record.message_ref == {"ts": "2.2"}
    assert await stores.outbox.claim(207.0, until=260.0, owner="me", surfaces=["slack"]) == []


async def test_a_claim_lapses_so_a_dead_deliverers_rows_are_delivered(stores: Stores) -> None:
    """A row claimed by a process that died is claimable again after the claim lapses."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    assert len(await stores.outbox.claim(200.0, until=260.0, owner="a", surfaces=["slack"])) == 1
    assert await stores.outbox.claim(259.0, until=300.0, owner="b", surfaces=["slack"]) == []
    assert len(await stores.outbox.claim(260.0, until=300.0, owner="b", surfaces=["slack"])) == 1


async def test_rows_are_born_claimed_by_the_process_that_wrote_them(stores: Stores) -> None:
    """The process that wrote a step delivers what it owed; others wait for its claim to lapse."""
    await steps(stores).start(run("r1"))
    await steps(stores, owner="a").issue(pause("q1", run_id="r1"))  # claimed until 100 + 30
    assert await stores.outbox.claim(120.0, until=160.0, owner="b", surfaces=["slack"]) == []
    (mine,) = await stores.outbox.claim(120.0, until=160.0, owner="a", surfaces=["slack"])
    assert (mine.kind, mine.interrupt_id) == (DeliveryKind.PUBLISH, "q1")
    (late,) = await stores.outbox.claim(130.0, until=190.0, owner="b", surfaces=["slack"])
    assert late.delivery_id == mine.delivery_id


def bound(stores: Stores, owner: str, claim_seconds: float = 130.0) -> tuple[Steps, OwedRows]:
    """Steps bound to ``owner``, whose owed rows land in the returned hand-off."""
    handoff = OwedRows()
    bound_steps = steps(stores)
    bound_steps.lifecycle.bind(owner=owner, claim_seconds=claim_seconds, sink=handoff.owe_all)
    return bound_steps, handoff


async def test_the_writers_steps_hand_it_their_rows_with_the_question(
    stores: Stores,
) -> None:
    """Ask, close and finish hand over what they owe, born claimed, oldest first, with
    the question as the write left it; nothing needs a claim."""
    written, handoff = bound(stores, "a")
    await steps(stores).start(run("r0"))
    await written.issue(pause("q0", run_id="r0"))  # claimed until 100 + 130
    assert handoff.take("b", 200.0) == ([], False)  # left for its own deliverer
    assert handoff.take("a", 230.0) == ([], True)  # its born claim ran out: anyone's to claim
    await steps(stores).start(run("r1"))
    await written.issue(pause("q2", run_id="r1"))
    (post,), claim = handoff.take("a", 200.0)
    assert (post.kind, post.interrupt_id, post.pause, claim) == (
        DeliveryKind.PUBLISH,
        "q2",
        pause("q2", run_id="r1"),
        False,
    )
    await steps(stores).delivered(post.delivery_id, at=201.0, message_ref={"ts": "1.2"})
    handoff.settle(post.delivery_id)
    answered = dataclasses.replace(
        closing(by="bob", at=210.0),
        answer=OtherAnswer({"ok": 1}),
        lease_owner="a",
        lease_until=260.0,
    )
    assert await written.spend("q2", answered)
    assert await written.finish("r1", RunStatus.COMPLETED, at=220.0, text="done")
    (edit, outcome), claim = handoff.take("a", 221.0)
    assert edit.pause is not None
    assert (edit.kind, edit.pause.status, edit.pause.answer, edit.pause.message_ref) == (
        DeliveryKind.CLOSED,
        QuestionStatus.ANSWERED,
        OtherAnswer({"ok": 1}),
        {"ts": "1.2"},
    )
    assert (outcome.kind, outcome.body, claim) == (
        DeliveryKind.OUTCOME,
        {"text": "done", "failed": False},
        False,
    )
    owed = [d.delivery_id for d in await stores.outbox.of_run("r1")]
    assert [edit.delivery_id, outcome.delivery_id] == owed[-2:]


async def test_a_row_behind_one_not_in_hand_is_left_to_the_claim(stores: Stores) -> None:
    """Order first: a row owed after one that waits for a retry is not handed over."""
    written, handoff = bound(stores, "a")
    await steps(stores).start(run("r1"))
    await written.issue(pause("q1", run_id="r1"))
    (post,), _ = handoff.take("a", 200.0)
    await stores.outbox.retry(post.delivery_id, next_at=240.0, error="ratelimited")
    handoff.settle(post.delivery_id, pending=True)
    leased = dataclasses.replace(closing(at=210.0), lease_owner="a", lease_until=260.0)
    assert await written.spend("q1", leased)
    assert handoff.take("a", 211.0) == ([], True)


async def test_a_failed_delivery_leaves_its_reason_on_the_run(stores: Stores) -> None:
    """Given up for good: the row is failed and the run says why, for an admin."""
    await steps(stores).start(run("r1"))
    await steps(stores).issue(pause("q1", run_id="r1"))
    (row,) = await stores.outbox.claim(200.0, until=260.0, owner="me", surfaces=["slack"])
    await stores.outbox.failed(row.delivery_id, at=201.0, error="invalid_auth: reinstall")
    (failed,) = await stores.outbox.of_run("r1")
    assert (failed.state, failed.last_error) == (DeliveryState.FAILED, "invalid_auth: reinstall")
    got = await stores.runs.get("r1")
    assert got is not None
    assert got.delivery_error == "invalid_auth: reinstall"
    assert await stores.outbox.claim(999.0, until=1000.0, owner="me", surfaces=["slack"]) == []


async def test_cross_scope_attempts_keep_a_count_and_the_last_few(stores: Stores) -> None:
    """A row answered from elsewhere again and again stays bounded."""
    await steps(stores).issue(pause("q1"))
    for n in range(MAX_CROSS_SCOPE_KEPT + 7):
        await steps(stores).record_cross_scope("q1", CrossScopeAttempt(f"s{n}", "eve", 1.0))
    row = await stores.ledger.get("q1")
    assert row is not None
    assert row.cross_scope_count == MAX_CROSS_SCOPE_KEPT + 7
    kept = [a.scope for a in row.cross_scope_attempts]
    assert kept == [f"s{n}" for n in range(7, MAX_CROSS_SCOPE_KEPT + 7)]


async def test_outstanding_is_filtered_by_scope(stores: Stores) -> None:
    """outstanding lists only open pauses, and only the scope asked for when given."""
    await steps(stores).issue(pause("a1", scope="a"))
    await steps(stores).issue(pause("b1", scope="b"))
    await steps(stores).issue(pause("a2", scope="a"))
    await steps(stores).issue(pause("a3", scope="a", status=QuestionStatus.EXPIRED))
    assert [p.interrupt_id for p in await stores.ledger.outstanding()] == ["a1", "b1", "a2"]
    assert [p.interrupt_id for p in await stores.ledger.outstanding(scope="a")] == ["a1", "a2"]
    assert await stores.ledger.outstanding(scope="zzz") == []


async def test_nudges_due_lists_the_open_pauses_whose_next_step_is_due(stores: Stores) -> None:
    """What the reminders' sweep reads: open pauses whose next reminder or escalation step
    is due by now, the longest due first, at most limit; a counted one moves on."""
    remind = stored_policy({"remind_after_seconds": 10, "max_reminders": 2})
    escalate = stored_policy({"escalate": [{"after_seconds": 5, "answerers": ["bob"]}]})
    await steps(stores).issue(pause("remind", policy=remind))  # due at 110
    await steps(stores).issue(pause("escalate", policy=escalate))  # due at 105
    await steps(stores).issue(pause("plain"))
    await steps(stores).issue(pause("quorum", policy=stored_policy({"quorum": 2})))
    await steps(stores).issue(pause("closed", policy=remind, status=QuestionStatus.EXPIRED))
    ids = [p.interrupt_id for p in await stores.ledger.nudges_due(120.0)]
    assert ids == ["escalate", "remind"]
    assert [p.interrupt_id for p in await stores.ledger.nudges_due(107.0)] == ["escalate"]
    assert [p.interrupt_id for p in await stores.ledger.nudges_due(120.0, limit=1)] == ["escalate"]
    assert await stores.ledger.nudges_due(104.0) == []
    reminded = await steps(stores).lifecycle.nudge(
        (await stores.ledger.nudges_due(120.0))[1], at=111.0, level=0, body={}
    )
    assert reminded is not None
    # Its second reminder is due at 120, its last; then it owes none.
    assert [p.interrupt_id for p in await stores.ledger.nudges_due(119.0)] == ["escalate"]
    again = (await stores.ledger.nudges_due(120.0))[1]
    assert (again.interrupt_id, again.reminders) == ("remind", 1)
    assert await steps(stores).lifecycle.nudge(again, at=121.0, level=0, body={}) is not None
    assert [p.interrupt_id for p in await stores.ledger.nudges_due(1e9)] == ["escalate"]


async def test_overdue_is_ordered_by_expiry_and_limited(stores: Stores) -> None:
    """overdue lists open pauses expired by now, soonest expiry first, at most limit."""
    for interrupt_id, expires_at in [("c", 30.0), ("a", 10.0), ("b", 20.0), ("future", 50.0)]:
        await steps(stores).issue(pause(interrupt_id, expires_at=expires_at))
    await steps(stores).issue(pause("closed", expires_at=5.0, status=QuestionStatus.CANCELLED))
    assert [p.interrupt_id for p in await stores.ledger.overdue(40.0)] == ["a", "b", "c"]
    assert [p.interrupt_id for p in await stores.ledger.overdue(40.0, limit=2)] == ["a", "b"]
    assert await stores.ledger.overdue(1.0) == []


async def test_checkpoints_round_trip_with_distinct_ids(stores: Stores) -> None:
    """Each save gets its own id and load returns the saved state; unknown ids load None."""
    first = {"messages": [{"role": "user", "content": "hi"}], "step": 1}
    second = {"messages": [], "step": 2, "nested": {"a": [1, 2.5, None, True]}}
    id1 = await stores.checkpoints.save("run-1", first)
    id2 = await stores.checkpoints.save("run-1", second)
    id3 = await stores.checkpoints.save("run-2", first)
    assert len({id1, id2, id3}) == 3
    assert await stores.checkpoints.load(id1) == first
    assert await stores.checkpoints.load(id2) == second
    assert await stores.checkpoints.load(id3) == first
    assert await stores.checkpoints.load("run-1:nope") is None


async def test_runs_create_get_finish_and_recent(stores: Stores) -> None:
    """Runs read back whole, finish records the end, recent is newest first."""
    older, newer = run("r1", created_at=1.0), run("r2", created_at=2.0)
    await steps(stores).start(older)
    await steps(stores).start(newer)
    assert await stores.runs.get("r1") == older
    assert await stores.runs.get("missing") is None

    assert await steps(stores).finish("r1", RunStatus.FAILED, at=6.0, text="stopped", failed=True)
    got = await stores.runs.get("r1")
    assert got is not None
    assert (got.status, got.updated_at, got.final_text) == (RunStatus.FAILED, 6.0, "stopped")

    assert [r.run_id for r in await stores.runs.recent()] == ["r2", "r1"]
    assert [r.run_id for r in await stores.runs.recent(limit=1)] == ["r2"]


async def test_audit_recent_is_newest_first_and_filters_by_run(stores: Stores) -> None:
    """Audit events come back newest first, optionally only one run's."""
    events = [
        AuditEvent(at=1.0, kind="issued", run_id="r1", interrupt_id="i1", actor="bot"),
        AuditEvent(at=2.0, kind="issued", run_id="r2", interrupt_id="i2", actor="bot"),
        AuditEvent(at=3.0, kind="answered", run_id="r1", actor="alice", detail={"choice": "y"}),
    ]
    for event in events:
        await stores.audit.append(event)
    assert await stores.audit.recent() == list(reversed(events))
    assert await stores.audit.recent(limit=2) == [events[2], events[1]]
    assert await stores.audit.recent(run_id="r1") == [events[2], events[0]]
    assert await stores.audit.recent(run_id="nobody") == []


async def test_for_runs_lists_those_runs_pauses_in_issue_order(stores: Stores) -> None:
    """for_runs returns every pause of the runs named, by issued_at, attempts included."""
    await steps(stores).issue(pause("late", run_id="r1", issued_at=30.0))
    await steps(stores).issue(pause("other", run_id="r3", issued_at=5.0))
    await steps(stores).issue(pause("early", run_id="r2", issued_at=10.0))
    await steps(stores).issue(pause("tie-a", run_id="r1", issued_at=20.0))
    await steps(stores).issue(pause("tie-b", run_id="r2", issued_at=20.0))
    await steps(stores).record_cross_scope("late", CrossScopeAttempt("b", "eve", 25.0))
    assert await steps(stores).spend("early", closing())

    found = await stores.ledger.for_runs(["r1", "r2", "nobody"])

    assert [p.interrupt_id for p in found] == ["early", "tie-a", "tie-b", "late"]
    assert found == [await stores.ledger.get(p.interrupt_id) for p in found]
    assert found[-1].cross_scope_attempts == (CrossScopeAttempt("b", "eve", 25.0),)
    assert found[0].status is QuestionStatus.ANSWERED
    assert await stores.ledger.for_runs([]) == []
    assert await stores.ledger.for_runs(["nobody"]) == []


async def test_in_conversation_lists_the_latest_runs_oldest_first(stores: Stores) -> None:
    """in_conversation keeps one surface's one conversation, the latest ``limit``, oldest first."""
    mine = [said("a", "C1", 3.0), said("b", "C1", 1.0), said("c", "C1", 2.0)]
    for record in [*mine, said("x", "C2", 1.5), said("y", "C1", 2.5, surface="slack")]:
        await steps(stores).start(record)
    assert await steps(stores).finish("b", RunStatus.COMPLETED, at=9.0, text="done")

    listed = await stores.runs.in_conversation("console", "C1")

    assert [r.run_id for r in listed] == ["b", "c", "a"]
    assert listed[0] == await stores.runs.get("b")
    latest = await stores.runs.in_conversation("console", "C1", limit=2)
    assert [r.run_id for r in latest] == ["c", "a"]
    assert await stores.runs.in_conversation("console", "C1", limit=0) == []
    assert await stores.runs.in_conversation("console", "nowhere") == []
    assert await stores.runs.in_conversation("teams", "C1") == []


async def test_conversations_summarise_a_surface_most_recent_first(stores: Stores) -> None:
    """Each conversation: first run's text, last activity of any run, and its run count."""
    await steps(stores).start(said("a1", "A", 1.0, text="deploy web"))
    await steps(stores).start(said("b1", "B", 2.0, text="status api"))
    await steps(stores).start(said("a2", "A", 3.0, text="roll back"))
    await steps(stores).start(said("c1", "C", 4.0, text="restart worker"))
    await steps(stores).start(said("s1", "A", 9.0, surface="slack"))
    # Activity after creation counts: B's run finishes last of all.
    assert await steps(stores).finish("b1", RunStatus.COMPLETED, at=8.0, text="fine")

    summaries = await stores.runs.conversations("console")

    assert summaries == [
        ConversationSummary(key="B", title="status api", updated_at=8.0, runs=1),
        ConversationSummary(key="C", title="restart worker", updated_at=4.0, runs=1),
        ConversationSummary(key="A", title="deploy web", updated_at=3.0, runs=2),
    ]
    assert [s.key for s in await stores.runs.conversations("console", limit=2)] == ["B", "C"]
    assert await stores.runs.conversations("console", limit=0) == []
    assert await stores.runs.conversations("teams") == []


async def test_conversations_break_ties_by_first_run(stores: Stores) -> None:
    """Equally recent conversations keep their first runs' order: by created_at, then insertion."""
    await steps(stores).start(said("y", "Y", 2.0))
    await steps(stores).start(said("z", "Z", 1.0))
    await steps(stores).start(said("x", "X", 2.0))
    for run_id in ("z", "y", "x"):
        assert await steps(stores).finish(run_id, RunStatus.COMPLETED, at=5.0, text="done")

    assert [s.key for s in await stores.runs.conversations("console")] == ["Z", "Y", "X"]


async def test_installations_are_kept_per_platform_and_key(stores: Stores) -> None:
    """An installation is saved, replaced, found by platform and key, and deleted."""
    assert await stores.installations.find("slack", "T1") is None
    await stores.installations.save("slack", "T1", "sealed-1")
    await stores.installations.save("slack", "T1", "sealed-2")
    await stores.installations.save("teams", "T1", "other")
    assert await stores.installations.find("slack", "T1") == "sealed-2"
    assert await stores.installations.find("teams", "T1") == "other"
    await stores.installations.delete("slack", "T1")
    assert await stores.installations.find("slack", "T1") is None
    assert await stores.installations.find("teams", "T1") == "other"


async def test_an_expiry_does_not_close_a_question_extended_since_it_was_listed(
    stores: Stores,
) -> None:
    """The sweeper listed it overdue, an admin extended it, then the sweeper's close arrives."""
    await steps(stores).issue(pause("q1", expires_at=200.0))
    assert await steps(stores).extend("q1", expires_at=900.0, at=210.0, actor="root")
    late = Closing(status=QuestionStatus.EXPIRED, by="", at=250.0)
    assert await steps(stores).spend("q1", late) is False
    row = await _get(stores, "q1")
    assert row.status is QuestionStatus.OUTSTANDING
    due = Closing(status=QuestionStatus.EXPIRED, by="", at=900.0)
    assert await steps(stores).spend("q1", due) is True
    assert (await _get(stores, "q1")).status is QuestionStatus.EXPIRED


async def _get(stores: Stores, interrupt_id: str) -> Question:
    row = await stores.ledger.get(interrupt_id)
    assert row is not None
    return row
