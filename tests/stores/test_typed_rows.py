"""A question's typed contents are parsed once where its row becomes a ``Question``, and
written back as the very JSON they were read from; rows in the shapes older versions wrote
still parse. Both backends read and write rows through ``bot/stores/_rows.py``."""

from __future__ import annotations

import json
from typing import Any

from bot.contract.models import Policy, Tally
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
