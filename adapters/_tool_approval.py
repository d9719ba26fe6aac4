"""Tool calls waiting for consent -> approval questions -> one decision per call id.

The part the OpenAI Agents SDK and Pydantic AI adapters share: both stop a
run on tool calls that need a person's consent, both name each call by an id
the model gave it, and both continue once each call has a yes or a no. This
module knows neither framework; it speaks ``bot.client`` only, so every rule
(tokens, who may answer, expiry, retries across a restart) stays in the bridge
and its client.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot.client import (
    ApprovalDecision,
    ApprovalPayload,
    AskOptions,
    Bridge,
    Question,
    QuestionObject,
    RouteLike,
)

# The API's limit on an idempotency key; a longer one is folded into a digest.
_MAX_KEY = 200


@dataclass(frozen=True)
class ToolCall:
    """One call the model made that needs consent, named by the model's call id."""

    call_id: str
    tool: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Approve:
    """A person approved the call: run the tool, with ``arguments`` when they edited them
    (None: the arguments the model gave)."""

    call_id: str
    answered_by: str
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Reject:
    """The call must not run; ``message`` is what the model is told instead.

    ``answered_by`` is empty when nobody decided (the question expired or was
    cancelled): no answer is never taken as consent.
    """

    call_id: str
    message: str
    answered_by: str = ""


ToolCallDecision = Approve | Reject


def rejected_by_a_person(comment: str) -> str:
    """What the model reads when a person rejects its call."""
    reason = comment.strip()
    if reason:
        return f"A person rejected this tool call: {reason}"
    return "A person rejected this tool call."


def answered_instead(message: str) -> str:
    """What the model reads when a person answers in the tool's place (``respond``)."""
    return f"A person answered instead of running this tool call: {message.strip()}"


def not_decided(question: QuestionObject) -> str:
    """What the model reads when the question closed without a decision."""
    if question.status == "expired":
        return "Nobody approved this tool call before its question expired; it did not run."
    reason = (question.cancel_reason or "").strip()
    suffix = f": {reason}" if reason else "."
    return f"The approval question for this tool call was cancelled{suffix} The call did not run."


def question_key(run_id: str, call_id: str) -> str:
    """The idempotency key of one call's question: the same run and call, the same question."""
    key = f"{run_id}:{call_id}"
    if len(key) <= _MAX_KEY:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def _summary(call: ToolCall) -> str:
    return f"Run {call.tool} with the arguments shown."


@dataclass(frozen=True, kw_only=True)
class Approver:
    """Asks the bridge about each tool call and waits for every decision.

    ``route`` and ``answerers`` say where the question goes and who may
    answer it, as ``Bridge.approve`` takes them; ``risk``, ``ttl_seconds`` and
    ``summary`` shape each question; ``callback_url`` has the bridge post a
    signed webhook when each closes; ``timeout`` bounds the wait (``None``:
    until the questions close, across bridge restarts).
    """

    bridge: Bridge
    route: RouteLike
    answerers: Sequence[str]
    risk: str = "medium"
    ttl_seconds: int | None = None
    callback_url: str | None = None
    timeout: float | None = None
    summary: Callable[[ToolCall], str] = field(default=_summary)
    # The decisions each question allows (``edit``, ``respond`` beside approve and reject);
    # None: the bridge's default (``BOT_ALLOW``).
    allow: Sequence[str] | None = None

    async def ask(self, run_id: str, calls: Sequence[ToolCall]) -> list[Question[QuestionObject]]:
        """One approval question per call; asking again for a call returns its question."""
        ids = [call.call_id for call in calls]
        if len(set(ids)) != len(ids):
            raise ValueError(f"tool call ids must be unique within a run, got {ids}")
        return [await self._ask_one(run_id, call) for call in calls]

    async def decide(self, run_id: str, calls: Sequence[ToolCall]) -> dict[str, ToolCallDecision]:
        """Ask about every call, wait for every question, and return decisions by call id."""
        questions = await self.ask(run_id, calls)
        # One after the other under one deadline: a question answered while an
        # earlier one was waited on returns at once, and no wait outlives a failure.
        loop = asyncio.get_running_loop()
        deadline = None if self.timeout is None else loop.time() + self.timeout
        decisions: dict[str, ToolCallDecision] = {}
        for call, question in zip(calls, questions, strict=True):
            left = None if deadline is None else max(deadline - loop.time(), 0.0)
            decisions[call.call_id] = decision_of(call.call_id, await question.wait(left))
        return decisions

    @functools.cached_property
    def _options(self) -> AskOptions:
        # What every call's question is asked with, built once from the fields above.
        return AskOptions.of(
            route=self.route,
            answerers=self.answerers,
            ttl_seconds=self.ttl_seconds,
            callback_url=self.callback_url,
            allow=self.allow,
        )

    async def _ask_one(self, run_id: str, call: ToolCall) -> Question[QuestionObject]:
        payload = ApprovalPayload(
            action=call.tool,
            summary=self.summary(call),
            arguments=dict(call.arguments),
            risk=self.risk,
        )
        options = replace(
            self._options, metadata={"run_id": run_id, "call_id": call.call_id}, run_ref=run_id
        )
        return await self.bridge.create(
            payload, options, idempotency_key=question_key(run_id, call.call_id)
        )


def decision_of(call_id: str, question: QuestionObject) -> ToolCallDecision:
    """The decision a closed question carries; anything but an approval keeps the tool idle."""
    if question.status != "answered":
        return Reject(call_id, not_decided(question))
    who = question.answered_by.id if question.answered_by is not None else ""
    match question.typed_answer:
        case ApprovalDecision(decision="approve"):
            return Approve(call_id, who)
        case ApprovalDecision(decision="edit", arguments=edited):
            return Approve(call_id, who, dict(edited or {}))
        case ApprovalDecision(decision="respond", message=message):
            return Reject(call_id, answered_instead(message or ""), who)
        case ApprovalDecision(comment=comment):
            return Reject(call_id, rejected_by_a_person(comment), who)
        case _:
            return Reject(call_id, rejected_by_a_person(""), who)


def arguments_of(raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as a JSON object; a string that is not one is shown whole."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}
