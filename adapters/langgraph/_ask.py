"""``ask_human`` and ``request_approval``: ask through the bridge from inside a graph node.

Each call asks the bridge (with an idempotency key from ``_keys``), then calls
LangGraph's ``interrupt()`` with the question's id, so the graph parks on its
own checkpointer. When ``Resumer`` resumes the thread with the closed question,
the node runs again from its top: every ask in it is re-sent with the same key
(the bridge answers with the question it already has, so no second message is
posted) and ``interrupt()`` returns the closed question, which becomes the
node's ``HumanAnswered`` / ``HumanApproved`` / ``HumanRejected`` / ``Unanswered``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_config
from langgraph.types import interrupt
from pydantic import ValidationError

from adapters.langgraph._keys import idempotency_key, with_origin
from adapters.langgraph._outcomes import (
    ApprovalResult,
    AskHumanResult,
    approval_result_of,
    ask_human_result_of,
)
from adapters.langgraph.errors import LangGraphError, NotInNode, QuestionChanged
from bot.client import Bridge, Conflict, Question, QuestionObject, QuestionsLike, RouteLike
from bot.contract.decisions import APPROVE_OR_REJECT

# The ``type`` of the interrupt value our calls raise; the resumer looks for it.
BRIDGE_INTERRUPT = "bridge_question"
# Where a node's count of asks lives: the task's own configurable, which
# LangGraph builds afresh for every run of a task (so a resumed node counts from 0).
_COUNTER = "__bridge_ask_counter__"


@dataclass(frozen=True)
class _Origin:
    thread_id: str
    checkpoint_ns: str
    node: str
    index: int | str

    @property
    def key(self) -> str:
        return idempotency_key("node", self.thread_id, self.checkpoint_ns, self.index)

    def metadata(self, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        origin = {
            "thread_id": self.thread_id,
            "node": self.node,
            "checkpoint_ns": self.checkpoint_ns,
            "index": self.index,
        }
        return with_origin(None if extra is None else dict(extra), origin)


def _origin(name: str | None) -> _Origin:
    try:
        config = get_config()
    except RuntimeError:
        raise NotInNode(
            "ask_human and request_approval must be awaited inside a LangGraph node."
        ) from None
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise NotInNode(
            "The graph runs without a thread_id: compile it with a checkpointer and invoke "
            'it with config={"configurable": {"thread_id": ...}}.'
        )
    counter: list[int] = configurable.setdefault(_COUNTER, [0])
    index = counter[0]
    counter[0] += 1
    node = str((config.get("metadata") or {}).get("langgraph_node", ""))
    return _Origin(
        str(thread_id),
        str(configurable.get("checkpoint_ns", "")),
        node,
        index if name is None else name,
    )


async def ask_human(
    bridge: Bridge,
    questions: QuestionsLike,
    *,
    route: RouteLike,
    answerers: Sequence[str] | None = None,
    ttl_seconds: int | None = None,
    callback_url: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> AskHumanResult:
    """Ask a person (``ask_user``) and park the graph until they answer.

    ``name`` replaces the call's index within the node in the idempotency key:
    give one when the node's asks are conditional, so a re-run that takes
    another branch cannot be matched to the wrong question.
    """
    origin = _origin(name)
    asked = bridge.ask(
        questions,
        route=route,
        idempotency_key=origin.key,
        answerers=answerers,
        ttl_seconds=ttl_seconds,
        callback_url=callback_url,
        metadata=origin.metadata(metadata),
    )
    return ask_human_result_of(await _park(asked))


async def request_approval(
    bridge: Bridge,
    action: str,
    summary: str,
    *,
    arguments: Mapping[str, Any],
    route: RouteLike,
    answerers: Sequence[str],
    risk: str = "medium",
    ttl_seconds: int | None = None,
    callback_url: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> ApprovalResult:
    """Ask ``answerers`` to approve ``action``; park the graph until they decide.

    Do the action only on ``HumanApproved``: ``HumanRejected`` is a person's refusal,
    ``Unanswered`` means nobody decided (expired or cancelled).
    """
    origin = _origin(name)
    asked = bridge.approve(
        action,
        summary,
        arguments=arguments,
        risk=risk,
        route=route,
        answerers=answerers,
        # A node gets HumanApproved or HumanRejected: it has no way to take edited arguments or
        # a response, so its question never lets the bridge's BOT_ALLOW offer them
        # (HumanInTheLoopMiddleware is the way to let a reviewer edit a tool call).
        allow=APPROVE_OR_REJECT,
        idempotency_key=origin.key,
        ttl_seconds=ttl_seconds,
        callback_url=callback_url,
        metadata=origin.metadata(metadata),
    )
    return approval_result_of(await _park(asked))


async def _park(asked: Awaitable[Question[QuestionObject]]) -> QuestionObject:
    try:
        question = await asked
    except Conflict as exc:
        raise QuestionChanged(
            "This node asked something else when it re-ran: a node must ask the same "
            "question each time it runs, or give each ask its own name=."
        ) from exc
    resumed = interrupt(
        {
            "type": BRIDGE_INTERRUPT,
            "question_id": question.id,
            "kind": question.object.kind,
            "payload": question.object.payload,
        }
    )
    return closed_question(resumed, question.id)


def closed_question(resumed: Any, interrupt_id: str) -> QuestionObject:
    """The closed question a resume carries, checked to be the one this call asked."""
    try:
        closed = QuestionObject.model_validate(resumed)
    except ValidationError:
        raise LangGraphError(
            f"The graph was resumed with something other than question {interrupt_id}: "
            "resume it with Resumer, which passes the closed question."
        ) from None
    if closed.id != interrupt_id:
        raise LangGraphError(
            f"The graph was resumed with question {closed.id} where it asked {interrupt_id}."
        )
    if not closed.closed:
        raise LangGraphError(f"The graph was resumed while question {interrupt_id} is still open.")
    return closed
