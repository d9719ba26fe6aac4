"""The gateway: an MCP server offering its upstreams' tools, each call forwarded, refused or
asked about first, as the rules say.

A call that needs a person is an ``approval`` question asked through ``/v1``
(``bot.client``), so the route, the policy, the surfaces, the audit and the
durable state are the bridge's own. Its idempotency key is the caller, the
tool and the canonical arguments (with a generation, ``_journal.py``): a call
made again while its question is open waits for that same question, whichever
gateway process asks, and one that comes back after the answer picks it up.
An approved call runs once, with what was approved; every result the gateway
makes itself is a tool error, or for a respond, valid for the tool as listed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_REQUEST,
    CallToolRequestParams,
    CallToolResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    InputRequiredResult,
    InputResponses,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # the mcp SDK's own types package
from pydantic import ValidationError

from adapters.mcp_gateway._config import GatewayFile, Rule
from adapters.mcp_gateway._journal import Claimed, Finished, InDoubt, Journal
from adapters.mcp_gateway._rules import Ask, Forward, Refuse, verdict
from adapters.mcp_gateway._upstreams import Connection, Offered, UpstreamError
from bot.client import Bridge, BridgeError, QuestionObject, TransportError
from bot.contract.answers import (
    ApprovalDecision,
    AskUserAnswers,
    CancelReason,
    FormValues,
    OtherAnswer,
    answer_json,
)
from bot.contract.form_schema import check_arguments_schema
from bot.contract.models import validation_sentence

log = logging.getLogger(__name__)

# How often a waiting call tells its client it is still alive (a progress notification).
PROGRESS_SECONDS = 10
UNKNOWN_TOOL = "The gateway offers no tool named {name!r}; list the tools again."
NO_ROUTE = (
    "No route to ask on: give the rule a route, or set BOT_MCP_ROUTE (e.g. slack:C123) where "
    "the gateway runs."
)
NO_ANSWERERS = (
    "No one may approve this call: give the rule answerers, or set BOT_MCP_ANSWERERS where the "
    "gateway runs."
)
PENDING = (
    "This call is waiting for approval (question {id}, asked on {route}); it has not run. "
    "Call the same tool with the same arguments again to keep waiting for that same question."
)
REJECTED = "A person rejected this call; it did not run. {who}{comment}"
NO_ONE_ANSWERED = (
    "No one answered the approval of this call in time (question {id}, {status}); it did not "
    "run. This is not a rejection: you may ask again."
)
IN_DOUBT = (
    "The approved call was handed to the upstream before the gateway restarted, and its result "
    "was lost; it is not run a second time. Check the upstream's state before calling again."
)
UNREACHABLE = (
    "The bridge cannot be reached right now to ask for approval; the call did not run. Try "
    "again shortly."
)
# A URL-mode elicitation's two answers: the person opened the link and finished, or declined.
DONE, DECLINE = "Done", "Decline"
ELICIT_OUTSIDE_A_CALL = "The gateway forwards an elicitation only while one of its calls runs."


@dataclass(frozen=True, slots=True)
class Answered:
    """A 2026-07-28 retry's answers to the input requests of the round before, and the
    upstream's request state from it (both None on a first call)."""

    input_responses: InputResponses | None = None
    request_state: str | None = None


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: the MCP client's own name, the key it came with, and what identical
    calls of this caller share (the key's fingerprint, never the key)."""

    client: str
    key: str
    scope: str


# A ``Bridge`` for one call, asking with the caller's key.
BridgeFor = Callable[[ServerRequestContext[Any, Any]], AbstractAsyncContextManager[Bridge]]
CallerFor = Callable[[ServerRequestContext[Any, Any]], Awaitable[Caller]]


# Compared by identity: two identical calls running at once are two calls.
@dataclass(frozen=True, eq=False)
class _Call:
    """One call of an offered tool: who made it, through which connection to the bridge, and
    the rule that decided it (None: the annotations' default). An elicitation during the call
    is asked where its rule says."""

    ctx: ServerRequestContext[Any, Any]
    offered: Offered
    arguments: dict[str, Any]
    caller: Caller
    bridge: Bridge
    rule: Rule | None = None


@dataclass
class Gateway:
    """The upstreams, the rules, and what a call is asked with."""

    config: GatewayFile
    journal: Journal
    route: str | None
    answerers: Sequence[str]
    connections: dict[str, Connection] = field(default_factory=dict)
    offered: dict[str, Offered] = field(default_factory=dict)
    _running: dict[str, list[_Call]] = field(default_factory=dict)
    _forwarding: dict[str, asyncio.Task[CallToolResult]] = field(default_factory=dict)

    async def start(self) -> None:
        """Connect every upstream and list its tools; one that cannot be reached is one warning."""
        for upstream in self.config.upstreams:
            connection = Connection(upstream, self._elicited)
            self.connections[upstream.name] = connection
            try:
                for offered in await connection.tools():
                    self.offered[offered.name] = offered
            except UpstreamError as error:
                log.warning("%s; its tools are not offered.", error)

    async def close(self) -> None:
        # An approved call still running ends with its upstream's connection: its journal
        # row stays "started", so no later call runs it again.
        running = list(self._forwarding.values())
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for connection in self.connections.values():
            await connection.close()

    def server(self, *, bridge_for: BridgeFor, caller_for: CallerFor) -> Server[Any]:
        """The MCP server clients talk to."""

        async def list_tools(
            _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
        ) -> ListToolsResult:
            return ListToolsResult(tools=[offered.listed for offered in self.offered.values()])

        async def call_tool(
            ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
        ) -> CallToolResult | InputRequiredResult:
            async with bridge_for(ctx) as bridge:
                who = await caller_for(ctx)
                return await self.call(
                    ctx,
                    params.name,
                    dict(params.arguments or {}),
                    who,
                    bridge,
                    answered=Answered(params.input_responses, params.request_state),
                )

        return Server(
            "hitl-bridge-gateway",
            instructions=(
                "Tools of other MCP servers, each prefixed by its server's name. Some calls wait "
                "for a person's approval; a result saying the approval is pending means: call "
                "the same tool with the same arguments again to keep waiting."
            ),
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )

    async def call(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        arguments: dict[str, Any],
        caller: Caller,
        bridge: Bridge,
        *,
        answered: Answered | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """One call of an offered tool, as the rules say; ``answered``: what a 2026-07-28
        client's retry brings back for the input requests the gateway passed to it."""
        offered = self.offered.get(name)
        if offered is None:
            return _error(UNKNOWN_TOOL.format(name=name))
        call = _Call(ctx, offered, arguments, caller, bridge)
        match verdict(self.config.rules, name, offered.tool.annotations):
            case Forward(rule):
                forwarded = replace(call, rule=rule)
                if rule is not None and rule.elicit == "client" and _answers_in_rounds(ctx):
                    return await self._relayed(forwarded, answered or Answered())
                return await self._forward(forwarded)
            case Refuse(sentence):
                return _error(sentence)
            case Ask(rule):
                return await self._asked(replace(call, rule=rule))

    async def _asked(self, call: _Call) -> CallToolResult:
        rule, offered, caller = call.rule, call.offered, call.caller
        route = (rule.route if rule else None) or self.route
        if route is None:
            return _error(NO_ROUTE)
        answerers = list((rule.answerers if rule else None) or self.answerers)
        if not answerers:
            return _error(NO_ANSWERERS)
        canonical = json.dumps(
            [offered.name, call.arguments], sort_keys=True, separators=(",", ":")
        )
        base = hashlib.sha256(f"{caller.scope}\n{canonical}".encode()).hexdigest()[:40]
        generation = self.journal.generation(base)
        allow = list(rule.allow) if rule and rule.allow else None
        try:
            asked = await call.bridge.approve(
                offered.name,
                _summary(offered, caller, rule),
                arguments=call.arguments,
                risk=rule.risk if rule else "high",
                route=route,
                answerers=answerers,
                idempotency_key=f"gateway:{base}:{generation}",
                ttl_seconds=rule.ttl_seconds if rule else None,
                policy=rule.policy if rule else None,
                allow=allow,
                arguments_schema=_edit_schema(offered) if allow and "edit" in allow else None,
                metadata={
                    "mcp_gateway": {
                        "upstream": offered.upstream,
                        "tool": offered.tool.name,
                        "client": caller.client,
                        "key": caller.key,
                    }
                },
            )
        except ValidationError as invalid:
            return _error(validation_sentence(invalid))
        except TransportError:
            return _error(UNREACHABLE)
        except BridgeError as refused:
            return _error(str(refused))
        wait = self.config.gateway.wait_seconds
        question = await _waited(call.ctx, call.bridge, asked.object, wait)
        if not question.closed:
            return _error(PENDING.format(id=question.id, route=question.route.key))
        result = await self._decided(call, question, base)
        self.journal.delivered(base, generation)
        return result

    async def _decided(self, call: _Call, question: QuestionObject, base: str) -> CallToolResult:
        if question.status != "answered":
            return _error(NO_ONE_ANSWERED.format(id=question.id, status=question.status))
        who = question.answered_by.name if question.answered_by else None
        match answer := question.typed_answer:
            case ApprovalDecision(decision="approve" | "edit" as decision, arguments=given):
                edited = given if decision == "edit" else None
                # The /v1 object's payload (wire JSON) of the approval this gateway asked,
                # which always carries the call's arguments.
                approved = dict(edited) if edited is not None else question.payload["arguments"]
                return await self._once(replace(call, arguments=approved), question.id, base)
            case ApprovalDecision(decision="respond", message=message):
                # A tool with an output schema takes no plain text as a success: an error
                # result is the one a client shows as text without checking a schema.
                return _text(message or "", error=call.offered.tool.output_schema is not None)
            case _:
                comment = answer.comment if isinstance(answer, ApprovalDecision) else ""
                return _error(
                    REJECTED.format(
                        who=f"Rejected by {who}." if who else "",
                        comment=f" Their comment: {comment}" if comment else "",
                    ).strip()
                )

    async def _once(self, call: _Call, question_id: str, base: str) -> CallToolResult:
        """Run an approved question's call exactly as approved, at most once."""
        running = self._forwarding.get(question_id)
        if running is None:
            match self.journal.claim(question_id, base):
                case Finished(recorded):
                    return CallToolResult.model_validate_json(recorded)
                case InDoubt():
                    return _error(IN_DOUBT)
                case Claimed():
                    # A task of the gateway's own, not the request's: a client that goes
                    # away mid-call does not cut an approved call short, and its repeat
                    # picks up the result the journal keeps.
                    running = asyncio.create_task(self._claimed(call, question_id))
                    self._forwarding[question_id] = running
        return await asyncio.shield(running)

    async def _claimed(self, call: _Call, question_id: str) -> CallToolResult:
        try:
            result = await self._forward(call)
            recorded = result.model_dump_json(by_alias=True, exclude_none=True)
            self.journal.finish(question_id, recorded)
            return result
        finally:
            del self._forwarding[question_id]

    async def _forward(self, call: _Call) -> CallToolResult:
        with self._upstream_runs(call) as progress:
            try:
                return await self.connections[call.offered.upstream].call(
                    call.offered.tool.name, call.arguments, progress=progress
                )
            except UpstreamError as error:
                return _error(str(error))

    async def _relayed(
        self, call: _Call, answered: Answered
    ) -> CallToolResult | InputRequiredResult:
        """A forwarded call whose upstream's input requests (the 2026-07-28 style) go to the
        client as they are, and whose retry goes on to the upstream with the client's
        answers: nothing of the rounds is kept here."""
        with self._upstream_runs(call) as progress:
            try:
                return await self.connections[call.offered.upstream].relay(
                    call.offered.tool.name,
                    call.arguments,
                    input_responses=answered.input_responses,
                    request_state=answered.request_state,
                    progress=progress,
                )
            except UpstreamError as error:
                return _error(str(error))

    @contextlib.contextmanager
    def _upstream_runs(self, call: _Call) -> Iterator[ProgressFnT | None]:
        """While the upstream runs ``call``: an elicitation from it is the call's, and its
        progress goes to a client that asked for progress (else None is yielded)."""
        upstream = call.offered.upstream
        self._running.setdefault(upstream, []).append(call)

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            # The upstream's own progress, passed on to the client that asked for it; a
            # client gone since (the call outlives it) hears nothing, and the call goes on.
            with contextlib.suppress(Exception):
                await call.ctx.session.report_progress(progress, total, message)

        # Only a client that asked for progress gets the upstream's; asking the upstream for
        # it otherwise costs every call a token and its notifications for no one.
        meta = call.ctx.meta
        wants_progress = bool(meta and meta.get("progress_token") is not None)
        try:
            yield progress if wants_progress else None
        finally:
            self._running[upstream].remove(call)

    async def _elicited(
        self, upstream: str, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        """An upstream's elicitation during a call, asked of a person where the call's rule
        says (else ``elicit_route``), as a ``form`` question, or a link to open (URL mode)."""
        calls = self._running.get(upstream) or []
        if not calls:
            return ErrorData(code=INVALID_REQUEST, message=ELICIT_OUTSIDE_A_CALL)
        # Several calls at once on one upstream: the latest one's rule decides.
        call = calls[-1]
        rule = call.rule
        if rule is not None and rule.elicit == "client" and _can_elicit(call.ctx):
            return await _client_answers(call, params)
        route = (rule.route if rule else None) or self.config.gateway.elicit_route or self.route
        if route is None:
            return ErrorData(code=INVALID_REQUEST, message=NO_ROUTE)
        answerers = list(rule.answerers) if rule and rule.answerers else None
        title = f"{upstream} asks (for {call.caller.client})"
        try:
            if isinstance(params, ElicitRequestFormParams):
                asked = await call.bridge.form(
                    title[:100],
                    params.message,
                    schema=params.requested_schema,
                    route=route,
                    answerers=answerers,
                    idempotency_key=f"gateway-elicit:{uuid.uuid4()}",
                )
            else:
                asked = await call.bridge.ask(
                    {
                        "questions": [
                            {
                                "question": f"{params.message}\nOpen this link: {params.url}",
                                "options": [{"label": DONE}, {"label": DECLINE}],
                            }
                        ]
                    },
                    route=route,
                    answerers=answerers,
                    idempotency_key=f"gateway-elicit:{uuid.uuid4()}",
                )
        except (ValidationError, ValueError) as invalid:
            sentence = (
                validation_sentence(invalid)
                if isinstance(invalid, ValidationError)
                else str(invalid)
            )
            return ErrorData(code=INVALID_REQUEST, message=sentence)
        except BridgeError as refused:
            return ErrorData(code=INVALID_REQUEST, message=str(refused))
        question = await _polled(call.bridge, asked.object, self.config.gateway.wait_seconds)
        if not question.closed:
            # Answered meanwhile, or the bridge is away: either way the upstream hears cancel.
            with contextlib.suppress(BridgeError):
                await call.bridge.cancel(question.id, "No one answered in time.")
            return ElicitResult(action="cancel")
        return _elicit_result(question)


def _answers_in_rounds(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The client speaks 2026-07-28 and said it takes elicitations: an upstream's
    ``InputRequiredResult`` can go to it as it is, and its retry come back."""
    session = ctx.session
    capabilities = session.client_capabilities
    modern = session.protocol_version in MODERN_PROTOCOL_VERSIONS
    return modern and bool(capabilities and capabilities.elicitation)


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The client said it takes elicitations and this request can carry one to it (a
    2025-era connection; at 2026-07-28 there is no request to the client mid-call)."""
    session = ctx.session
    capabilities = session.client_capabilities
    return bool(capabilities and capabilities.elicitation) and session.can_send_request


async def _client_answers(call: _Call, params: ElicitRequestParams) -> ElicitResult | ErrorData:
    """The upstream's elicitation passed through to the client that made the call."""
    session, related = call.ctx.session, call.ctx.request_id
    try:
        if isinstance(params, ElicitRequestFormParams):
            return await session.elicit_form(params.message, params.requested_schema, related)
        return await session.elicit_url(
            params.message, params.url, params.elicitation_id or str(uuid.uuid4()), related
        )
    except MCPError as error:
        return error.error


def _elicit_result(question: QuestionObject) -> ElicitResult:
    """A closed question as the elicitation's answer: answered is accept (a link's Decline is
    decline), cancelled by a person is decline, expired is cancel."""
    if question.status == "cancelled":
        return ElicitResult(action="decline")
    answer = question.typed_answer
    if question.status != "answered" or answer is None:
        return ElicitResult(action="cancel")
    match answer:
        case AskUserAnswers(answers=answers):
            # The link's one question: the option chosen is its answer's one value.
            chosen = list(answers.values())
            return ElicitResult(action="decline" if chosen == [DECLINE] else "accept")
        case FormValues(values=values):
            return ElicitResult(action="accept", content=dict(values))
        case ApprovalDecision() | CancelReason() | OtherAnswer():
            # Not what a link's elicitation asks: passed on as the JSON it was answered with.
            return ElicitResult(action="accept", content=answer_json(answer))
        case _:
            assert_never(answer)


def _summary(offered: Offered, caller: Caller, rule: Rule | None) -> str:
    said = f" {rule.reason}" if rule and rule.reason else ""
    return (
        f"{caller.client} (key {caller.key}) asks to run the tool {offered.tool.name} of the "
        f"MCP server {offered.upstream}.{said}"
    )[:1000]


def _edit_schema(offered: Offered) -> dict[str, Any] | None:
    """The tool's input schema as what an edit must fit, when it is in the subset a surface
    can show; else None, and an edit keeps the original arguments' keys and types."""
    schema = {
        k: v
        for k, v in offered.tool.input_schema.items()
        if k in ("type", "properties", "required")
    }
    try:
        check_arguments_schema(schema)
    except ValueError:
        return None
    return schema


async def _waited(
    ctx: ServerRequestContext[Any, Any], bridge: Bridge, question: QuestionObject, seconds: float
) -> QuestionObject:
    """The question once closed, or as it is after ``seconds``; progress sent meanwhile, which
    the client sees only if it gave a progress token (the SDK sends nothing otherwise)."""
    started = time.monotonic()

    async def progress(polled: QuestionObject) -> None:
        waited = time.monotonic() - started
        await ctx.session.report_progress(waited, None, f"Waiting for approval ({polled.id})")

    return await _polled(bridge, question, seconds, each=progress)


async def _polled(
    bridge: Bridge,
    question: QuestionObject,
    seconds: float,
    *,
    each: Callable[[QuestionObject], Awaitable[None]] | None = None,
) -> QuestionObject:
    """The question once closed, or as it is after ``seconds`` (or when the bridge is away)."""
    deadline = time.monotonic() + seconds
    while not question.closed:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            question = await bridge.poll(question.id, max(1, round(min(left, PROGRESS_SECONDS))))
        except TransportError:
            break
        if each is not None:
            await each(question)
    return question


def _text(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def _error(sentence: str) -> CallToolResult:
    return _text(sentence, error=True)
