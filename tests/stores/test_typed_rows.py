"""A question's typed contents (its payload and answer among them) are parsed once where its
row becomes a ``Question``, and written back as the very JSON they were read from; rows in the
shapes older versions wrote still parse. Both backends read and write rows through
``bot/stores/_rows.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.contract.answers import (
    ApprovalDecision,
    AskUserAnswers,
    CancelReason,
    FormValues,
    OtherAnswer,
    answer_json,
    answer_of,
)
from bot.contract.models import Policy, Tally
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    payload_json,
    payload_of,
)
from bot.interactions.approval import approval_registration
from bot.questions.records import CrossScopeAttempt, Post
from bot.stores import _rows
from bot.stores.ports import Stores
from tests.support import steps

# A row as today's code writes it, every typed column set.
POLICY = Policy(
    quorum=2,
    requester="slack:T1:U0ALICE",
    requester_may_answer=False,
    escalate=[{"after_seconds": 60, "answerers": ["slack:T1:U0DAN"]}],
).model_dump(mode="json")
TALLY = {
    "approve": ["slack:T1:U0BO"],
    "reject": [],
    "names": {"slack:T1:U0BO": "bo", "slack:T1:U0CY": "cy"},
    "superseded": ["slack:T1:U0CY"],
    "proposal": {"env": "prod "},
    "changes": 'env "prod" → "prod "',
}
POSTS = [
    {
        "route": "teams:19:ops",
        "surface": "teams",
        "scope": "tenant-1/19:ops",
        "conversation": {"key": "19:ops", "reference": {"serviceUrl": "https://x"}},
        "message_ref": {"activity_id": "1"},
    },
    {
        "route": "slack:C2",
        "surface": "slack",
        "scope": "T1:C2",
        "conversation": {"key": "C2"},
        "message_ref": None,
    },
]
ATTEMPTS = [{"scope": "T-evil", "responder": "slack:T9:U0EVE", "at": 150.5}]


def row(**columns: Any) -> dict[str, Any]:
    """A ``pauses`` row as a backend returns it: JSON columns as text."""
    base: dict[str, Any] = {
        "interrupt_id": "int_1",
        "run_id": "run_1",
        "scope": "T1:C1",
        "name": "approval",
        "tool_call_id": "call_1",
        "checkpoint_id": "",
        "payload": json.dumps({"action": "deploy", "summary": "ship"}),
        "issued_at": 100.0,
        "expires_at": 200.0,
        "root_run_id": "",
        "session_id": "",
        "thread_id": "",
        "status": "outstanding",
        "answer": None,
        "closed_by": "",
        "closed_at": None,
        "resumed_at": None,
        "message_ref": None,
        "closed_by_id": "",
        "cross_scope_count": 1,
        "answerers": "[]",
        "policy": None,
        "tally": None,
        "level": 0,
        "reminders": 0,
        "posts": "[]",
        "trace_parent": "",
    }
    return {**base, **columns}


def written(params: tuple[Any, ...], column: str) -> Any:
    return params[_rows.PAUSE_COLUMNS.index(column)]


def test_todays_rows_parse_to_typed_values_and_write_back_the_same_json() -> None:
    """Policy, tally, posts and cross-scope attempts come out typed; the insert's
    parameters of the record are the very JSON text the row held."""
    stored = row(policy=_rows.dump(POLICY), tally=_rows.dump(TALLY), posts=_rows.dump(POSTS))
    question = _rows.pause_from_row(stored, ATTEMPTS)
    assert isinstance(question.policy, Policy) and question.policy.quorum == 2
    assert isinstance(question.tally, Tally)
    assert question.tally.superseded == ["slack:T1:U0CY"] and question.tally.changes
    assert all(isinstance(post, Post) for post in question.posts)
    assert question.posts[0].message_ref == {"activity_id": "1"}
    assert question.cross_scope_attempts == (CrossScopeAttempt("T-evil", "slack:T9:U0EVE", 150.5),)
    params = _rows.pause_params(question)
    for column in ("policy", "tally", "posts"):
        assert written(params, column) == stored[column], column
    assert [a.to_json() for a in question.cross_scope_attempts] == ATTEMPTS


def test_rows_in_older_shapes_still_parse() -> None:
    """A policy stored before ids were canonical (``u0alice``), a tally from before edits
    (no ``superseded``, ``proposal``, ``changes``) or before names, no posts, no policy, an
    attempt whose time is a whole number: each parses, with the defaults for what is
    missing; a tally written again is the same JSON."""
    before_edits = {"approve": ["a", "b"], "reject": ["c"], "names": {"a": "Ana"}}
    question = _rows.pause_from_row(
        row(
            policy=json.dumps({"quorum": 2, "requester": " U0ALICE"}),
            tally=json.dumps(before_edits),
        ),
        [{"scope": "T2", "responder": "slack:T2:U0EVE", "at": 150}],
    )
    assert question.policy is not None and question.policy.quorum == 2
    assert question.policy.requester is not None and question.policy.on_expire == "expire"
    assert question.tally is not None and question.tally.voters() == {"a", "b", "c"}
    assert not question.tally.superseded and question.tally.proposal is None
    assert written(_rows.pause_params(question), "tally") == json.dumps(
        before_edits, separators=(",", ":")
    )
    assert question.cross_scope_attempts[0].at == 150.0
    unnamed = _rows.pause_from_row(row(tally=json.dumps({"approve": ["a"], "reject": []})), [])
    assert unnamed.tally is not None and unnamed.tally.names == {}
    bare = _rows.pause_from_row(row(policy=json.dumps({}), posts="[]"), [])
    assert bare.policy is None and bare.posts == () and bare.tally is None


async def test_a_backend_reads_back_the_typed_question_it_stored(stores: Stores) -> None:
    """Written by the ask and read back by the backend, the typed contents are equal."""
    question = _rows.pause_from_row(
        row(policy=_rows.dump(POLICY), tally=_rows.dump(TALLY), posts=_rows.dump(POSTS)),
        ATTEMPTS,
    )
    await steps(stores).issue(question)
    assert await stores.ledger.get(question.interrupt_id) == question


# Payloads as today's code writes them (each model's full dump, an approval's ``allow`` and
# ``arguments_schema`` left out when they say nothing), and in older shapes: an approval from
# before edits (no ``allow``, no ``arguments_schema``), one without arguments, an ask_user
# item without ``header`` or ``multi_select``, a deployment's own interaction, and a row of a
# known name whose shape no model takes any more.
PAYLOADS: list[tuple[str, dict[str, Any], type]] = [
    (
        "ask_user",
        {
            "questions": [
                {
                    "question": "Where?",
                    "header": "Env",
                    "options": [
                        {"label": "staging", "description": ""},
                        {"label": "prod", "description": "careful"},
                    ],
                    "multi_select": False,
                }
            ]
        },
        AskUserPayload,
    ),
    ("ask_user", {"questions": [{"question": "Why?", "options": []}]}, AskUserPayload),
    (
        "approval",
        {
            "action": "deploy",
            "summary": "Ship web",
            "arguments": {"env": "prod", "replicas": 2},
            "risk": "high",
            "arguments_schema": {"type": "object", "properties": {"env": {"type": "string"}}},
            "allow": ["approve", "reject", "edit"],
        },
        ApprovalPayload,
    ),
    (
        "approval",
        {"action": "deploy", "summary": "Ship", "arguments": {"b": 1, "a": 2}, "risk": "low"},
        ApprovalPayload,
    ),
    ("approval", {"action": "deploy", "summary": "Ship"}, ApprovalPayload),
    (
        "form",
        {
            "title": "Sign up",
            "message": "",
            "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        FormToolPayload,
    ),
    ("deploy_window", {"window": "tonight", "nested": {"z": 1, "a": [1, 2]}}, OtherPayload),
    ("ask_user", {"question": "an old shape?"}, OtherPayload),
]


@pytest.mark.parametrize(("name", "stored", "kind"), PAYLOADS)
def test_a_payload_parses_by_its_name_and_writes_back_the_same_json(
    name: str, stored: dict[str, Any], kind: type
) -> None:
    """Today's payloads and older ones come out as their kind's model (a deployment's own,
    or a row no model takes, as ``OtherPayload``) and go back as the very JSON text."""
    text = _rows.dump(stored)
    question = _rows.pause_from_row(row(name=name, payload=text), [])
    assert isinstance(question.payload, kind)
    assert written(_rows.pause_params(question), "payload") == text
    assert payload_json(question.payload) == stored


def test_a_payload_written_by_the_capability_is_the_models_full_dump() -> None:
    """An approval asked today (through the registration) parses to the model and its row is
    the JSON the registration wrote, so the record adds nothing to the row."""
    clean = approval_registration().validate_payload(
        {"action": "deploy", "summary": "Ship", "arguments": {"env": "prod"}}
    )
    parsed = payload_of("approval", clean)
    assert isinstance(parsed, ApprovalPayload) and parsed.arguments == {"env": "prod"}
    assert payload_json(parsed) == clean


async def test_a_backend_reads_back_each_payload_it_stored(stores: Stores) -> None:
    """Asked with each payload, a question read back from the store is equal to it."""
    for n, (name, stored, _) in enumerate(PAYLOADS):
        question = _rows.pause_from_row(
            row(
                interrupt_id=f"int_p{n}",
                tool_call_id=f"call_p{n}",
                name=name,
                payload=_rows.dump(stored),
            ),
            [],
        )
        await steps(stores).issue(question)
        assert await stores.ledger.get(question.interrupt_id) == question


# Answers as today's code writes them, and in older shapes, by the question's name and how it
# closed: an ask_user's (one reply, several chosen), an approval's decisions (an edit with both
# arguments, a response, a quorum's with who decided, one from before comments), a form's
# values, a cancel's reason, an expiry's policy rejection, a deployment's own interaction's, a
# row a retention pass emptied, and a known name's answer in a shape no model takes any more.
ANSWERS: list[tuple[str, str, dict[str, Any], type]] = [
    ("ask_user", "answered", {"answers": {"Where?": "prod"}}, AskUserAnswers),
    ("ask_user", "answered", {"answers": {"Which?": ["eu", "us"], "Why?": "load"}}, AskUserAnswers),
    ("approval", "answered", {"decision": "approve", "comment": ""}, ApprovalDecision),
    (
        "approval",
        "answered",
        {
            "decision": "edit",
            "comment": "smaller",
            "arguments": {"env": "prod", "replicas": 1},
            "original_arguments": {"env": "prod", "replicas": 2},
        },
        ApprovalDecision,
    ),
    (
        "approval",
        "answered",
        {"decision": "respond", "comment": "", "message": "use staging"},
        ApprovalDecision,
    ),
    (
        "approval",
        "answered",
        {"decision": "approve", "comment": "", "approved_by": ["slack:T1:U0BO", "teams:t:aad"]},
        ApprovalDecision,
    ),
    (
        "approval",
        "answered",
        {"decision": "reject", "comment": "no", "rejected_by": ["slack:T1:U0CY"]},
        ApprovalDecision,
    ),
    ("approval", "answered", {"decision": "approve"}, ApprovalDecision),
    ("form", "answered", {"name": "Ada", "replicas": 3, "checks": ["smoke"]}, FormValues),
    ("approval", "cancelled", {"reason": "moved to #ops"}, CancelReason),
    ("ask_user", "cancelled", {"reason": ""}, CancelReason),
    (
        "approval",
        "expired",
        {"decision": "reject", "comment": "expired without an answer"},
        ApprovalDecision,
    ),
    ("deploy_window", "answered", {"window": "tonight", "nested": {"z": 1}}, OtherAnswer),
    ("approval", "answered", {}, OtherAnswer),
    ("ask_user", "answered", {"answer": "an old shape"}, OtherAnswer),
    ("approval", "answered", {"decision": "maybe", "comment": ""}, OtherAnswer),
]


@pytest.mark.parametrize(("name", "status", "stored", "kind"), ANSWERS)
def test_an_answer_parses_by_name_and_status_and_writes_back_the_same_json(
    name: str, status: str, stored: dict[str, Any], kind: type
) -> None:
    """Today's answers and older ones come out as their kind's model (a deployment's own, or
    a value no model takes, as ``OtherAnswer``) and go back as the very JSON text, which is
    also what the ``/v1`` object shows."""
    text = _rows.dump(stored)
    question = _rows.pause_from_row(row(name=name, status=status, answer=text), [])
    assert isinstance(question.answer, kind)
    assert written(_rows.pause_params(question), "answer") == text
    assert answer_json(question.answer) == stored
    assert question.cancel_reason == (stored["reason"] if kind is CancelReason else "")


def test_no_answer_stays_none_however_it_closed() -> None:
    """Open, expired without a policy's rejection, or cancelled without a reason: None."""
    for status in ("outstanding", "expired", "cancelled"):
        question = _rows.pause_from_row(row(status=status, answer=None), [])
        assert question.answer is None and question.cancel_reason == ""
        assert written(_rows.pause_params(question), "answer") is None


def test_a_ballot_reads_back_as_the_approval_it_cast() -> None:
    """A ballot's answer is parsed once where its row is read; an emptied one stays what it
    is; both are written as the same JSON."""
    cast = {"decision": "edit", "comment": "", "arguments": {"a": 1}, "original_arguments": {}}
    for stored, kind in ((cast, ApprovalDecision), ({}, OtherAnswer)):
        text = _rows.vote_text("int_1", "slack:T1:U0BO", answer_of("approval", "answered", stored))
        assert text == _rows.dump(stored)
        ballot = _rows.vote_answer("int_1", "slack:T1:U0BO", text)
        assert isinstance(ballot, kind) and answer_json(ballot) == stored


async def test_a_backend_reads_back_each_answer_it_stored(stores: Stores) -> None:
    """Stored with each answer, a question read back from the store is equal to it."""
    for n, (name, status, stored, _) in enumerate(ANSWERS):
        question = _rows.pause_from_row(
            row(
                interrupt_id=f"int_a{n}",
                tool_call_id=f"call_a{n}",
                name=name,
                status=status,
                closed_at=150.0,
                answer=_rows.dump(stored),
            ),
            [],
        )
        await steps(stores).issue(question)
        assert await stores.ledger.get(question.interrupt_id) == question
