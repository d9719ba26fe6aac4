"""The shared glue: a closed question -> one decision; keys and arguments as the API takes them."""

from __future__ import annotations

from typing import Any

from adapters._tool_approval import Approve, Reject, arguments_of, decision_of, question_key
from bot.client import QuestionObject

NOW = "2026-01-01T00:00:00Z"


def closed(status: str, **fields: Any) -> QuestionObject:
    return QuestionObject.model_validate(
        {
            "id": "q1",
            "kind": "approval",
            "status": status,
            "payload": {"action": "deploy", "summary": "s", "arguments": {}, "risk": "high"},
            "route": {"surface": "console", "conversation": "c"},
            "answerers": ["anyone"],
            "created_at": NOW,
            "expires_at": NOW,
            "delivery": {"status": "posted"},
            "idempotency_key": "run:call",
            **fields,
        }
    )


def test_an_approval_approves_and_names_who() -> None:
    """decision approve -> Approve with the platform id of who answered."""
    question = closed(
        "answered",
        answer={"decision": "approve", "comment": ""},
        answered_by={"id": "slack:T1:U1", "name": "alice"},
    )
    assert decision_of("c1", question) == Approve("c1", "slack:T1:U1")


def test_a_rejection_carries_the_comment() -> None:
    """decision reject -> Reject whose message quotes the comment."""
    question = closed(
        "answered",
        answer={"decision": "reject", "comment": " too risky "},
        answered_by={"id": "console:root", "name": "Root"},
    )
    assert decision_of("c1", question) == Reject(
        "c1", "A person rejected this tool call: too risky", "console:root"
    )


def test_expired_and_cancelled_are_rejections_that_say_so() -> None:
    """No answer is never consent, and the model is told it was no decision, not a no."""
    expired = decision_of("c1", closed("expired"))
    assert isinstance(expired, Reject) and "expired" in expired.message
    assert expired.answered_by == ""
    cancelled = decision_of("c1", closed("cancelled", cancel_reason="called off"))
    assert isinstance(cancelled, Reject) and "cancelled: called off" in cancelled.message


def test_a_long_key_is_folded_into_a_digest_that_stays_the_same() -> None:
    """run:call fits the API's 200 characters; longer is a stable sha256."""
    assert question_key("run-1", "call_a") == "run-1:call_a"
    long = question_key("r" * 300, "call_a")
    assert long.startswith("sha256:") and len(long) <= 200
    assert long == question_key("r" * 300, "call_a") != question_key("r" * 300, "call_b")


def test_arguments_are_an_object_whatever_the_model_sent() -> None:
    """JSON object text, a mapping, nothing, or text that is not an object."""
    assert arguments_of('{"a": 1}') == {"a": 1}
    assert arguments_of({"a": 1}) == {"a": 1}
    assert arguments_of(None) == {} and arguments_of("") == {}
    assert arguments_of("not json") == {"arguments": "not json"}
    assert arguments_of("[1, 2]") == {"arguments": [1, 2]}
