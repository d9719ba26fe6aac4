"""The shell's text for a message reference, an outbox row and an audit line."""

from __future__ import annotations

import dataclasses
import json

from bot.admin import event_line, link_of, results
from bot.admin._render import closed_line, delivery_line, json_text
from bot.contract.answers import CancelReason
from bot.contract.payloads import payload_of
from bot.questions.quorum import stored_policy, stored_tally
from bot.questions.records import (
    AuditEvent,
    DeliveryKind,
    DeliveryState,
    OutboxRow,
    Question,
    QuestionStatus,
)


def test_message_references_read_as_links_or_words_never_json() -> None:
    assert link_of({"team": "T1", "channel": "C1", "ts": "1700000000.000100"}) == (
        "Slack https://slack.com/archives/C1/p1700000000000100"
    )
    teams = {"service_url": "https://smba", "conversation_id": "19:a", "activity_id": "1"}
    assert link_of(teams) == "Teams https://teams.microsoft.com/l/message/19:a/1"
    assert link_of({"conversation": "c-1"}) == "console conversation c-1"
    assert link_of(None) == "not posted yet"
    assert link_of({"surface": "test", "message": "m1"}) == "message m1, surface test"


def test_a_delivered_row_says_delivered_and_counts_only_failed_tries() -> None:
    row = OutboxRow(1, "r1", "slack", DeliveryKind.PUBLISH, state=DeliveryState.DONE)
    assert delivery_line(row) == "#1 publish to slack: delivered"
    retried = OutboxRow(
        2,
        "r1",
        "slack",
        DeliveryKind.CLOSED,
        attempts=2,
        state=DeliveryState.PENDING,
        last_error="ratelimited",
    )
    assert delivery_line(retried) == (
        "#2 closed to slack: pending, 2 failed tries so far; last error: ratelimited"
    )
    failed = OutboxRow(
        3, "r1", "teams", DeliveryKind.OUTCOME, attempts=5, state=DeliveryState.FAILED
    )
    assert delivery_line(failed) == "#3 outcome to teams: failed after 5 tries"


def test_the_bridges_own_steps_have_no_by() -> None:
    paused = AuditEvent(at=0.0, run_id="r1", kind="paused", interrupt_id="q1", actor="")
    assert " by " not in event_line(paused)
    cancelled = AuditEvent(
        at=0.0, run_id="r1", kind="cancelled", interrupt_id="q1", actor="shell:x"
    )
    assert event_line(cancelled).endswith("cancelled q1 by shell:x")


def test_a_closed_question_says_how_it_ended_who_and_why() -> None:
    """The shell's cancel reads as the audit does (shell:x), with the reason it was given."""
    asked = Question(
        "q1", "r1", "console", "ask_user", "t", "c", payload_of("ask_user", {}), 0.0, 60.0
    )
    cancelled = dataclasses.replace(
        asked,
        status=QuestionStatus.CANCELLED,
        closed_by="root",
        closed_by_id="shell:root",
        closed_at=1.8e9,
        answer=CancelReason("wrong service"),
    )
    assert closed_line(cancelled) == (
        "cancelled by root (shell:root) at 2027-01-15 08:00 UTC; reason: wrong service"
    )
    expired = dataclasses.replace(asked, status=QuestionStatus.EXPIRED, closed_at=1.8e9)
    assert closed_line(expired) == "expired at 2027-01-15 08:00 UTC"


def test_show_as_json_holds_the_question_as_its_row_does() -> None:
    """``admin --json show``: the payload, policy and tally are the JSON the row holds,
    not the typed values' text."""
    asked = {"action": "deploy", "summary": "Ship", "arguments": {"env": "prod"}}
    record = dataclasses.replace(
        Question(
            "q1", "r1", "console", "approval", "t", "c", payload_of("approval", asked), 0.0, 60.0
        ),
        policy=stored_policy({"quorum": 2}),
        tally=stored_tally({"approve": ["console:bo"], "reject": []}),
    )
    shown = results.RecordShown(1.0, record, None, ("console:bo",), (), ())
    question = json.loads(json_text(shown))["record"]
    assert question["payload"] == asked
    assert question["policy"]["quorum"] == 2
    assert question["tally"]["approve"] == ["console:bo"] and question["tally"]["reject"] == []
