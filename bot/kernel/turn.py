"""The turn loop: model -> reserve call ids -> stages -> dispatch, until done.

The kernel, not the model, mints call ids (reservation) so that a stage can
bind a pause to an id before any call of the round runs, and a resume can
join the answer onto exactly that id later.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.errors import BotError
from bot.kernel.contracts import (
    Capability,
    CapabilityContribution,
    CapabilityRequest,
    FoldedPlan,
    Phase,
    StageResult,
    fold_contributions,
)
from bot.kernel.interrupts import InvocationPaused, PendingInterrupt
from bot.kernel.journal import (
    CallContext,
    Journal,
    NoJournal,
    dispatching,
    model_step,
    tool_step,
)
from bot.kernel.messages import Message, ToolCall
from bot.kernel.provider import Provider
from bot.kernel.state import TurnRequest, TurnState
from bot.kernel.tools import Tool, bind_contributed_tool

DEFAULT_MAX_ROUNDS = 12

_current_turn: ContextVar[TurnRequest | None] = ContextVar("current_turn", default=None)


def current_turn() -> TurnRequest | None:
    """The request of the turn running in this task, if any."""
    return _current_turn.get()


class ContractViolationError(BotError):
    """A stage crashed; the turn cannot be trusted to continue."""


class TurnLimitError(BotError):
    """The model kept calling tools past the round limit."""


class TraceStatus(StrEnum):
    CHANGED = "changed"
    NO_CHANGE = "no-change"
    PAUSED = "paused"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class StageTrace:
    """What one stage did in one round; FAILED traces end the turn."""

    stage_id: str
    phase: Phase
    round: int
    status: TraceStatus
    detail: str = ""


def require_no_crashed_stage(traces: Sequence[StageTrace]) -> None:
    """Raise ContractViolationError naming the first stage that crashed."""
    for trace in traces:
        if trace.status is TraceStatus.FAILED:
            raise ContractViolationError(
                f"stage {trace.stage_id!r} crashed in {trace.phase.value} of round "
                f"{trace.round}: {trace.detail}. Stages must decline with no_change() "
                "rather than raise."
            )


@dataclass(frozen=True, slots=True)
class StageContext:
    """What a stage sees: the turn, its state and the calls still to run."""

    request: TurnRequest
    state: TurnState
    phase: Phase
    requests: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class TurnCompleted:
    """The model answered. ``unjournaled``: steps (the final reply) the caller journals
    with whatever it records of the ending, in one write."""

    text: str
    state: TurnState
    traces: tuple[StageTrace, ...] = ()
    unjournaled: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TurnSuspended:
    """The turn stopped at a pending interrupt; ``state`` is what resumes it."""

    interrupt: PendingInterrupt
    state: TurnState
    traces: tuple[StageTrace, ...] = ()


TurnOutcome = TurnCompleted | TurnSuspended


def reserve_call_id() -> str:
    return f"call_{secrets.token_hex(12)}"


@dataclass
class _Turn:
    request: TurnRequest
    state: TurnState
    traces: list[StageTrace] = field(default_factory=list)
    # The run's journal as it stood when this drive began.
    done: dict[str, Any] = field(default_factory=dict)
    # A model reply not yet journaled: it is written before the first of its
    # tools runs, or with the pause (in the checkpoint) or the ending that follows.
    unjournaled: dict[str, Any] = field(default_factory=dict)


class Agent:
    """A model, its tools and the capabilities folded into one plan."""

    def __init__(
        self,
        provider: Provider,
        *,
        capabilities: Sequence[Capability] = (),
        tools: Sequence[Tool] = (),
        grants: Sequence[CapabilityRequest] = (),
        system_prompt: str = "",
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        journal: Journal | None = None,
    ) -> None:
        self.provider = provider
        self.journal: Journal = journal or NoJournal()
        self.system_prompt = system_prompt
        self.max_rounds = max_rounds
        granted = {request.capability: request for request in grants}
        contributions: list[CapabilityContribution] = []
        for capability in capabilities:
            request = granted.get(capability.name, CapabilityRequest(capability=capability.name))
            contributions.append(capability.contribute(request))
        self.plan: FoldedPlan = fold_contributions(contributions, list(granted.values()))
        bound = [
            bind_contributed_tool(spec, parameters_schema=_schema_for(capabilities, spec.name))
            for spec in self.plan.tools
        ]
        self.tools: dict[str, Tool] = {}
        # Capabilities' own tools (``ask_user``): a round calling only these may pause.
        self._contributed = frozenset(spec.name for spec in self.plan.tools)
        for tool in (*bound, *tools):
            if tool.name in self.tools:
                raise BotError(f"two tools are named {tool.name!r}; tool names must be unique.")
            self.tools[tool.name] = tool

    async def run_turn(self, request: TurnRequest, *, fresh: bool = False) -> TurnOutcome:
        """Start a turn from the person's text.

        ``fresh``: the run was never driven before, so it has no journal to
        replay and the read is skipped. A re-drive (recovery) must leave it False.
        """
        messages = [Message("system", self.system_prompt)] if self.system_prompt else []
        messages.extend(request.history)
        messages.append(Message("user", request.text))
        return await self._drive(_Turn(request, TurnState(messages=messages)), read=not fresh)

    async def resume(
        self,
        request: TurnRequest,
        state: TurnState,
        *,
        observations: Mapping[str, str],
        journal: Mapping[str, Any] | None = None,
    ) -> TurnOutcome:
        """Continue a paused turn; ``observations`` join the paused call ids. ``journal``:
        the run's journal as the caller read it just now (None: read it here)."""
        reserved = {call.call_id for call in state.reserved}
        unknown = set(observations) - reserved
        if unknown:
            raise ContractViolationError(
                f"resume names call ids {sorted(unknown)} that the paused round did not "
                "reserve; the checkpoint and the answer do not belong together."
            )
        state.observations.update(observations)
        turn = _Turn(request, state)
        if journal is not None:
            turn.done = dict(journal)
        return await self._drive(turn, read=journal is None)

    async def _drive(self, turn: _Turn, *, read: bool) -> TurnOutcome:
        """The turn to its end or its pause; ``read``: load the run's journal first."""
        if read:
            turn.done = dict(await self.journal.steps(turn.request.run_id))
        with _running(turn.request):
            try:
                while True:
                    if turn.state.reserved:
                        await self._finish_round(turn)
                    if turn.state.round >= self.max_rounds:
                        raise TurnLimitError(
                            f"the model called tools for {self.max_rounds} rounds without "
                            "answering; raise max_rounds or check the tools' observations."
                        )
                    reply_text = await self._model_round(turn)
                    if reply_text is not None:
                        steps = dict(turn.unjournaled)
                        return TurnCompleted(reply_text, turn.state, tuple(turn.traces), steps)
            except InvocationPaused as paused:
                return TurnSuspended(paused.interrupt, turn.state, tuple(turn.traces))

    async def _model_round(self, turn: _Turn) -> str | None:
        state = turn.state
        state.round += 1
        await self._run_stages(turn, Phase.PRE_MODEL)
        text, calls = await self._model_reply(turn)
        await self._run_stages(turn, Phase.POST_MODEL)
        if not calls:
            state.messages.append(Message("assistant", text))
            return text
        state.messages.append(Message("assistant", text, tool_calls=calls))
        state.reserved = list(calls)
        state.observations = {}
        return None

    async def _model_reply(self, turn: _Turn) -> tuple[str, tuple[ToolCall, ...]]:
        """The round's reply with its reserved call ids: from the journal, or asked and recorded."""
        step = model_step(turn.state.round)
        recorded = turn.done.get(step)
        if recorded is not None:
            calls = tuple(ToolCall.from_json(call) for call in recorded["calls"])
            return str(recorded["text"]), calls
        definitions = [tool.definition() for tool in self.tools.values()]
        reply = await self.provider.complete(tuple(turn.state.messages), definitions)
        calls = tuple(
            ToolCall(reserve_call_id(), call.name, dict(call.arguments)) for call in reply.calls
        )
        entry = {"text": reply.text, "calls": [call.to_json() for call in calls]}
        if any(call.name not in self._contributed for call in calls):
            # A plain tool will run: the reply is recorded before anything can.
            await self.journal.record(turn.request.run_id, step, entry)
        else:
            # The final answer, or only capabilities' calls (which may pause): the
            # reply is journaled with the write that ends the round; a crash
            # before it asks the model again, which changes nothing in the world.
            turn.unjournaled[step] = entry
        return reply.text, calls

    async def _finish_round(self, turn: _Turn) -> None:
        state = turn.state
        waiting = tuple(c for c in state.reserved if c.call_id not in state.observations)
        await self._run_stages(turn, Phase.PRE_TOOL, waiting)
        for call in waiting:
            state.observations[call.call_id] = await self._tool_result(turn, call)
        for call in state.reserved:
            state.messages.append(
                Message("tool", state.observations[call.call_id], tool_call_id=call.call_id)
            )
        state.reserved = []
        state.observations = {}
        await self._run_stages(turn, Phase.POST_TOOL)

    async def _tool_result(self, turn: _Turn, call: ToolCall) -> str:
        """A finished call's journaled result, or the call dispatched and its result recorded."""
        step = tool_step(call.call_id)
        if step in turn.done:
            return str(turn.done[step])
        run_id = turn.request.run_id
        # The reply that asked for this call is recorded before the call runs, so a
        # replay dispatches it under the same call id (and idempotency key).
        for pending, entry in list(turn.unjournaled.items()):
            await self.journal.record(run_id, pending, entry)
            del turn.unjournaled[pending]
        with dispatching(CallContext(run_id, call.call_id, call.name)):
            result = await self._dispatch(call)
        await self.journal.record(run_id, step, result)
        return result

    async def _run_stages(
        self, turn: _Turn, phase: Phase, calls: tuple[ToolCall, ...] = ()
    ) -> None:
        context = StageContext(turn.request, turn.state, phase, calls)
        for stage in self.plan.stages_at(phase):
            handler = self.plan.handlers[stage.stage_id]
            trace_of = _tracer(stage.stage_id, phase, turn.state.round)
            try:
                result: StageResult[Any] = await handler(context)
            except InvocationPaused:
                turn.traces.append(trace_of(TraceStatus.PAUSED, ""))
                raise
            except Exception as crash:  # noqa: BLE001 - any crash becomes a FAILED trace
                turn.traces.append(trace_of(TraceStatus.FAILED, f"{type(crash).__name__}: {crash}"))
                # The turn is over, so no later stage of the phase may run: one
                # that pauses would write a ledger row and a checkpoint for a
                # turn that will never be resumed.
                break
            status = TraceStatus.CHANGED if result.changed else TraceStatus.NO_CHANGE
            turn.traces.append(trace_of(status, result.reason))
        require_no_crashed_stage(turn.traces)

    async def _dispatch(self, call: ToolCall) -> str:
        tool = self.tools.get(call.name)
        if tool is None:
            return f"There is no tool named {call.name!r}. Available: {', '.join(self.tools)}."
        try:
            return await tool.call(call.arguments)
        except Exception as error:  # noqa: BLE001 - a tool failure is the model's observation
            return f"The tool {call.name!r} failed: {type(error).__name__}: {error}"


def _tracer(
    stage_id: str, phase: Phase, round_number: int
) -> Callable[[TraceStatus, str], StageTrace]:
    def trace(status: TraceStatus, detail: str) -> StageTrace:
        return StageTrace(stage_id, phase, round_number, status, detail)

    return trace


def _schema_for(capabilities: Sequence[Capability], tool_name: str) -> dict[str, Any] | None:
    for capability in capabilities:
        schema_of = getattr(capability, "parameters_schema", None)
        if schema_of is not None:
            schema: dict[str, Any] | None = schema_of(tool_name)
            if schema is not None:
                return schema
    return None


@contextmanager
def _running(request: TurnRequest) -> Iterator[None]:
    token = _current_turn.set(request)
    try:
        yield
    finally:
        _current_turn.reset(token)
