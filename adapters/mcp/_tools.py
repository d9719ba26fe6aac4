"""The MCP tools: ``ask_human``, ``request_approval`` and ``get_answer``, asked through ``/v1``.

Each tool is a thin call of ``bot.client``: it asks, waits up to the
configured window, and returns the person's answer, or the question's id
with ``status: open`` when the window closes first, so a client's tool
timeout never loses the question: ``get_answer`` picks it up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.client import (
    AskUserItem,
    Bridge,
    BridgeError,
    Question,
    QuestionObject,
    TransportError,
    WaitTimeout,
)
from bot.contract.answers import ApprovalDecision, AskUserAnswers, FormValues, answer_json
from bot.contract.models import validation_sentence

# Gives the tools a ``Bridge`` for one call: stdio has one, ``/mcp`` one per caller's key.
BridgeFor = Callable[[Context], AbstractAsyncContextManager[Bridge]]
# Names whose questions a retried call shares: the process (stdio) or the caller (HTTP).
ScopeFor = Callable[[Context], str]

NO_ANSWERERS = (
    "request_approval needs BOT_MCP_ANSWERERS (who may approve, e.g. U123,U456 or 'anyone') "
    "set where this MCP server runs."
)
NO_ROUTE = "set BOT_MCP_ROUTE (e.g. slack:C123 or console:ops) where this MCP server runs."
T = TypeVar("T")

UNREACHABLE = "The bridge cannot be reached right now; call get_answer later with question_id."


class ToolResult(BaseModel):
    """What a tool returns: the answer once a person gave it, else the question's state."""

    # The tools' output schema has always been titled "Outcome"; MCP clients may read it.
    model_config = ConfigDict(title="Outcome")

    question_id: str
    status: Literal["open", "answered", "expired", "cancelled"]
    kind: Literal["ask_user", "approval", "form"]
    approved: bool | None = Field(
        default=None, description="request_approval: true only when a person approved."
    )
    decision: Literal["approve", "reject", "edit", "respond"] | None = None
    comment: str | None = None
    arguments: dict[str, Any] | None = Field(
        default=None,
        description="request_approval with decision edit: run the action with these arguments.",
    )
    message: str | None = Field(
        default=None,
        description="request_approval with decision respond: the person's reply; do not act.",
    )
    answers: dict[str, Any] | None = Field(
        default=None, description="ask_human: each question's text to its answer."
    )
    answered_by: str | None = None
    reason: str | None = Field(default=None, description="Why it was cancelled.")
    next: str | None = Field(default=None, description="What to do while it is open.")


@dataclass
class BridgeTools:
    """What the tools ask through (the bridge, scope, route, answerers, how long a call
    waits), and which calls' outcomes were already handed back."""

    bridge_for: BridgeFor
    scope_for: ScopeFor
    route: str | None
    answerers: Sequence[str]
    wait_seconds: float
    # A base key's generation: bumped once its question's outcome reached the client,
    # so the same call made again later asks anew instead of replaying that answer.
    _generations: dict[str, int] = field(default_factory=dict)

    def key(self, ctx: Context, tool: str, arguments: dict[str, Any]) -> str:
        canonical = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"))
        base = hashlib.sha256(f"{self.scope_for(ctx)}\n{canonical}".encode()).hexdigest()[:40]
        return f"mcp:{base}:{self._generations.get(base, 0)}"

    def delivered(self, question: QuestionObject) -> None:
        """The outcome reached the client: the next identical call is a new question."""
        prefix, _, rest = question.idempotency_key.partition(":")
        base, _, generation = rest.partition(":")
        if prefix == "mcp" and generation.isdigit() and question.closed:
            self._generations[base] = max(self._generations.get(base, 0), int(generation) + 1)


class _BridgeServer(MCPServer[Any]):
    """The SDK's server, refusing arguments that do not fit a tool's parameters (one missing,
    a value of the wrong type) in one sentence naming the argument, as every other refusal
    of these tools is, instead of pydantic's report of several lines and links."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            # Only the SDK's own check of the arguments fails with a ValidationError as its
            # cause: the tools turn theirs into a sentence (``_call``) before raising.
            invalid = error.__cause__
            if isinstance(error, UnexpectedToolError) or not isinstance(invalid, ValidationError):
                raise
            sentence = validation_sentence(invalid)
            raise ToolError(f"Error executing tool {name}: {sentence}") from invalid


def build_server(asking: BridgeTools, *, name: str = "hitl-bridge") -> MCPServer[Any]:
    """An ``MCPServer`` whose tools ask people through the bridge."""
    server: MCPServer[Any] = _BridgeServer(
        name,
        instructions=(
            "Ask a person with ask_human; ask for approval before a consequential action with "
            "request_approval and act only when approved is true. When a result has status "
            "'open', call get_answer with its question_id until it closes."
        ),
    )

    async def ask_human(
        questions: list[AskUserItem], ctx: Context, request_key: str = ""
    ) -> ToolResult:
        """Ask a person one to five questions (options make buttons; none means free text).

        Waits for the answer; if it takes longer, returns status 'open' with a
        question_id to pass to get_answer. request_key: a retry with the same
        arguments and key returns the same question; change it to ask anew.
        """
        route = _route(asking)
        items = [item.model_dump(mode="json") for item in questions]
        key = asking.key(ctx, "ask_human", {"questions": items, "request_key": request_key})
        async with asking.bridge_for(ctx) as bridge:
            asked = await _call(
                bridge.ask(
                    {"questions": items},
                    route=route,
                    answerers=list(asking.answerers) or None,
                    idempotency_key=key,
                )
            )
            return await _settle(asking, bridge, asked.object)

    async def request_approval(
        action: str,
        summary: str,
        ctx: Context,
        arguments: dict[str, Any] | None = None,
        risk: Literal["low", "medium", "high"] = "medium",
        request_key: str = "",
    ) -> ToolResult:
        """Ask a person to approve an action before you take it; act only if approved is true.

        action: the action's name; summary: what it will do, in words;
        arguments: what it will be called with; risk: low, medium or high.
        A rejection comes back as decision 'reject' with the person's comment. Where the
        bridge lets the person edit, decision 'edit' is approved with the arguments to use
        instead of yours; 'respond' is not approved and carries their message.
        """
        if not asking.answerers:
            raise ToolError(NO_ANSWERERS)
        route = _route(asking)
        given = dict(arguments or {})
        key = asking.key(
            ctx,
            "request_approval",
            {"action": action, "summary": summary, "arguments": given, "risk": risk}
            | {"request_key": request_key},
        )
        async with asking.bridge_for(ctx) as bridge:
            asked = await _call(
                bridge.approve(
                    action,
                    summary,
                    arguments=given,
                    risk=risk,
                    route=route,
                    answerers=list(asking.answerers),
                    idempotency_key=key,
                )
            )
            return await _settle(asking, bridge, asked.object)

    async def get_answer(question_id: str, ctx: Context) -> ToolResult:
        """The outcome of a question an earlier call left open; waits a while for it."""
        async with asking.bridge_for(ctx) as bridge:
            found = await _call(bridge.get(question_id))
            return await _settle(asking, bridge, found)

    server.add_tool(ask_human)
    server.add_tool(request_approval)
    server.add_tool(get_answer)
    return server


def _route(asking: BridgeTools) -> str:
    if asking.route is None:
        raise ToolError(f"No route for questions: {NO_ROUTE}")
    return asking.route


async def _call(pending: Awaitable[T]) -> T:
    # A ToolError is the SDK's anticipated failure: is_error with our text, one INFO line.
    # Anything else it treats as a crash: "Error executing tool", and a traceback logged.
    try:
        return await pending
    except ValidationError as invalid:
        # The client checks the body with the very models /v1 does, before sending it.
        raise ToolError(validation_sentence(invalid)) from None
    except TransportError:
        raise ToolError("The bridge cannot be reached right now; try again shortly.") from None
    except BridgeError as error:
        raise ToolError(str(error)) from None


async def _settle(asking: BridgeTools, bridge: Bridge, question: QuestionObject) -> ToolResult:
    if not question.closed:
        try:
            question = await Question(bridge, question, _same).wait(timeout=asking.wait_seconds)
        except WaitTimeout as still_open:
            question = still_open.question
        except TransportError:
            return _open(question, UNREACHABLE)
        except BridgeError as error:
            raise ToolError(str(error)) from None
    if not question.closed:
        return _open(question, f"Nobody has answered yet: call get_answer with {question.id}.")
    asking.delivered(question)
    return tool_result_of(question)


def _same(question: QuestionObject) -> QuestionObject:
    return question


def _open(question: QuestionObject, next_step: str) -> ToolResult:
    return ToolResult(question_id=question.id, status="open", kind=question.kind, next=next_step)


def tool_result_of(question: QuestionObject) -> ToolResult:
    """A closed question as the tool's result."""
    answer = question.typed_answer
    outcome = ToolResult(
        question_id=question.id,
        status=question.status,
        kind=question.kind,
        answered_by=question.answered_by.name if question.answered_by else None,
        reason=question.cancel_reason,
    )
    if question.kind == "approval":
        decided = answer if question.status == "answered" else None
        if isinstance(decided, ApprovalDecision):
            outcome.decision = decided.decision
            # Approved with changes is approved: with the arguments the person gave.
            outcome.approved = decided.decision in ("approve", "edit")
            outcome.comment = decided.comment
            if decided.decision == "edit":
                outcome.arguments = dict(decided.arguments or {})
            if decided.decision == "respond":
                outcome.message = decided.message or ""
        else:
            outcome.approved = False
    elif question.status == "answered":
        match answer:
            case AskUserAnswers(answers=answers):
                outcome.answers = dict(answers)
            case FormValues(values=values):
                outcome.answers = dict(values)
            case _:
                # A deployment's own kind: the answer as the bridge holds it, whole.
                outcome.answers = answer_json(answer)
    return outcome
