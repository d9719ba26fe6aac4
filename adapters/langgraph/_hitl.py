"""LangChain's ``HumanInTheLoopMiddleware`` interrupts, asked as bridge approvals.

The middleware pauses in one of two shapes, both read here from the
interrupt's value alone (LangChain is not imported):

- batched: ``{"action_requests": [...], "review_configs": [...]}``, resumed with
  ``{"decisions": [...]}`` in the order of the action requests;
- per call: ``{"type": "tool_approval", "tool_call_id", "name", "args", ...}``,
  resumed with one decision keyed by the interrupt's id.

Each action request is one approval question, keyed by the thread, the
interrupt id, its position and the action itself, so each decision is read
from the question asked for that very action, never from a position in a
list of answers. The bridge's approval answers approve or reject (with the
approver's comment as the reject message), and, where the action's review
config allows them, ``edit`` (the approver's arguments as the
``edited_action``) and ``respond`` (their message in the tool's place): the
question allows exactly what the review allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from adapters.langgraph._keys import idempotency_key
from adapters.langgraph._outcomes import ApprovalResult, HumanApproved, HumanRejected, Unanswered
from adapters.langgraph.errors import UnsupportedReview
from bot.contract.answers import ApprovalDecision, decision_of
from bot.contract.decisions import DECISIONS
from bot.contract.models import QuestionObject

_MAX_ACTION = 100
_MAX_SUMMARY = 1000


@dataclass(frozen=True)
class Review:
    """One action awaiting a person's approval, as the bridge will ask it."""

    action: str
    summary: str
    arguments: dict[str, Any]
    key: str
    position: int
    # The decisions the review config allows, as the question allows them.
    allow: tuple[str, ...] = ("approve", "reject")


Shape = Literal["batched", "per_call"]


def shape_of(value: Any) -> Shape | None:
    """Which middleware interrupt ``value`` is, or None when it is not one."""
    if not isinstance(value, dict):
        return None
    if value.get("type") == "tool_approval" and isinstance(value.get("name"), str):
        return "per_call"
    if isinstance(value.get("action_requests"), list) and "review_configs" in value:
        return "batched"
    return None


def reviews_of(thread_id: str, interrupt_id: str, value: dict[str, Any]) -> list[Review]:
    """The approvals one middleware interrupt needs, in the order it lists them."""
    allows: dict[str, set[str]] = {}
    if shape_of(value) == "per_call":
        requests = [value]
    else:
        requests = list(value["action_requests"])
        allows = _check_configs(requests, value.get("review_configs") or [])
    reviews = []
    for position, request in enumerate(requests):
        name = str(request.get("name", ""))
        arguments = request.get("args", request.get("arguments")) or {}
        identity = request.get("tool_call_id") or [name, arguments]
        description = str(request.get("description") or f"Run {name} with the arguments shown.")
        reviews.append(
            Review(
                action=name[:_MAX_ACTION],
                summary=description[:_MAX_SUMMARY],
                arguments=dict(arguments),
                key=idempotency_key("hitl", thread_id, interrupt_id, position, identity),
                position=position,
                allow=tuple(d for d in DECISIONS if d in allows.get(name, {"approve", "reject"})),
            )
        )
    return reviews


def _check_configs(
    requests: list[dict[str, Any]], configs: list[dict[str, Any]]
) -> dict[str, set[str]]:
    allowed = {str(c.get("action_name")): set(c.get("allowed_decisions") or ()) for c in configs}
    for request in requests:
        name = str(request.get("name", ""))
        decisions = allowed.get(name, {"approve", "reject"})
        if not {"approve", "reject"} <= decisions:
            raise UnsupportedReview(
                f"The review of {name} allows {sorted(decisions)}; the bridge answers an "
                "approval with approve or reject, so allow both for tools it reviews."
            )
    return allowed


def decision_json(decision: ApprovalResult, action: str) -> dict[str, Any]:
    """One middleware decision: approve, or reject with a message for the model."""
    if isinstance(decision, HumanApproved):
        return {"type": "approve"}
    if isinstance(decision, HumanRejected):
        if decision.comment:
            return {"type": "reject", "message": decision.comment}
        return {"type": "reject"}
    # Fail closed: no decision arrived, so the tool does not run, and the model
    # is told that nobody answered rather than that someone refused.
    assert isinstance(decision, Unanswered)
    return {
        "type": "reject",
        "message": f"No decision arrived for {action}, so it was not run: {decision.reason}",
    }


def answer_json(
    question: QuestionObject, review: Review, decision: ApprovalResult
) -> dict[str, Any]:
    """The middleware decision for ``review``'s closed question: an approver's edit as the
    ``edited_action`` (the same tool, the arguments they gave), a response as ``respond``
    with their message, anything else as ``decision_json`` reads it."""
    answer = question.typed_answer
    if question.status == "answered" and decision_of(answer) in review.allow:
        match answer:
            case ApprovalDecision(decision="edit", arguments=arguments):
                edited = {"name": review.action, "args": dict(arguments or {})}
                return {"type": "edit", "edited_action": edited}
            case ApprovalDecision(decision="respond", message=message):
                return {"type": "respond", "message": message or ""}
    return decision_json(decision, review.action)


def resume_value(value: dict[str, Any], decisions: list[dict[str, Any]]) -> Any:
    """What the middleware takes back: one decision per call, or the batch's list."""
    if shape_of(value) == "per_call":
        return decisions[0]
    return {"decisions": decisions}
