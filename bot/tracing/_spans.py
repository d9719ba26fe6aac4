"""The spans of a question's trace, and the traceparent that joins them (``bot.tracing``)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol, TypeVar

from opentelemetry import context, propagate, trace
from opentelemetry.environment_variables import OTEL_PYTHON_TRACER_PROVIDER
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACER = "chatops_hitl_bridge"
_T = TypeVar("_T")
# The row keeps W3C's form whatever OTEL_PROPAGATORS says: one header, one string.
_W3C = TraceContextTextMapPropagator()


class TracedQuestion(Protocol):
    """What a span reads of a question (``bot.questions.records.Question`` has it)."""

    @property
    def interrupt_id(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> object: ...
    @property
    def trace_parent(self) -> str: ...


# Whether the environment names a provider the API loads at its first use. The API's own
# ``get_tracer_provider`` looks this up in ``os.environ`` on every call until a provider is
# set, and a chat question's every step asks ``on()``: read once, as the process starts.
_PROVIDER_FROM_ENVIRONMENT = OTEL_PYTHON_TRACER_PROVIDER in os.environ


def on() -> bool:
    """An SDK's provider is installed: spans are recorded (worth a read to find a parent)."""
    # The API's global, set once (by ``setup.configure``, or a test's own provider).
    provider = trace._TRACER_PROVIDER
    if provider is None:
        if not _PROVIDER_FROM_ENVIRONMENT:
            return False
        provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def now() -> int:
    """A span's start, taken before a step whose span is recorded once it has happened."""
    return time.time_ns()


@contextmanager
def incoming(headers: Mapping[str, str]) -> Iterator[None]:
    """The request's trace context (``traceparent``, by OTEL_PROPAGATORS) as the current one."""
    token = context.attach(propagate.extract(headers))
    try:
        yield
    finally:
        context.detach(token)


# The contexts of a step while tracing is off and no span is current: what the API's no-op
# tracer would give (no traceparent, the invalid span), without building and attaching a
# context. Stateless, so one of each serves every step: a chat question's every step is
# on the hot path.
_UNTRACED_ASK: AbstractContextManager[str] = nullcontext("")
_UNTRACED_STEP: AbstractContextManager[Span] = nullcontext(trace.INVALID_SPAN)


def _untraced_here() -> bool:
    """Tracing is off and no span is current (no request's trace context attached)."""
    return not on() and trace.get_current_span() is trace.INVALID_SPAN


def asked(
    question: TracedQuestion, *, route: str = "", own_trace: bool = False
) -> AbstractContextManager[str]:
    """``question.asked``, a child of the current context (an agent's request), or with
    ``own_trace`` the root of a trace of its own; yields the traceparent to keep on the row
    ('' when tracing is off)."""
    if _untraced_here():
        return _UNTRACED_ASK
    if own_trace and not on():
        # A root of its own: the request's context is not its parent, nor carried on.
        return _detached("")
    return _asked(question, route, own_trace)


@contextmanager
def _detached(value: _T) -> Iterator[_T]:
    """The invalid span current while the block runs, as the no-op tracer's root would be."""
    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        yield value
    finally:
        context.detach(token)


@contextmanager
def _asked(question: TracedQuestion, route: str, own_trace: bool) -> Iterator[str]:
    tracer = trace.get_tracer(TRACER)
    attributes = ids(question, route=route)
    parent = context.Context() if own_trace else None
    with tracer.start_as_current_span(
        "question.asked", context=parent, kind=SpanKind.SERVER
    ) as span:
        span.set_attributes(attributes)
        carrier: dict[str, str] = {}
        _W3C.inject(carrier)
        yield carrier.get("traceparent", "")


def step(
    name: str, trace_parent: str, attributes: Mapping[str, str | int | bool]
) -> AbstractContextManager[Span]:
    """A span of the question's trace: a child of its asked span, whatever is current."""
    if not trace_parent and not on():
        # A question asked untraced, tracing still off: the no-op tracer's span, as ``asked``.
        if trace.get_current_span() is trace.INVALID_SPAN:
            return _UNTRACED_STEP
        return _detached(trace.INVALID_SPAN)
    return _step(name, trace_parent, attributes)


@contextmanager
def _step(
    name: str, trace_parent: str, attributes: Mapping[str, str | int | bool]
) -> Iterator[Span]:
    tracer = trace.get_tracer(TRACER)
    with tracer.start_as_current_span(
        name, context=_parent(trace_parent), attributes=dict(attributes)
    ) as span:
        yield span


def record(name: str, question: TracedQuestion, started: int, **more: str | int | bool) -> None:
    """A span of ``question``'s trace for a step that has happened (since ``started``)."""
    if not on():
        return
    tracer = trace.get_tracer(TRACER)
    span = tracer.start_span(
        name,
        context=_parent(question.trace_parent),
        attributes={**ids(question), **_named(more)},
        start_time=started,
    )
    span.end()


def failed(span: Span, outcome: str) -> None:
    """Mark ``span`` failed with a word (no receiver's answer, no URL: they may carry text)."""
    span.set_attribute("hitl.outcome", outcome)
    span.set_status(Status(StatusCode.ERROR))


def outgoing() -> dict[str, str]:
    """The current span's ``traceparent`` header, for a request the bridge sends ({} off)."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier


def ids(question: TracedQuestion, *, route: str = "") -> dict[str, str | int | bool]:
    """The attributes every span of the question carries: ids, kind and status."""
    attributes: dict[str, str | int | bool] = {
        "hitl.question.id": question.interrupt_id,
        "hitl.run.id": question.run_id,
        "hitl.question.kind": question.name,
        "hitl.question.status": str(question.status),
    }
    if route:
        attributes["hitl.route"] = route
    return attributes


def route_of(surface: str, conversation: Mapping[str, object]) -> str:
    """``surface:conversation``: the route an agent named, else the chat's own conversation."""
    route = conversation.get("route")
    if isinstance(route, Mapping):
        return f"{route.get('surface')}:{route.get('conversation')}"
    return f"{surface}:{conversation.get('key', '')}"


def _named(more: Mapping[str, str | int | bool]) -> dict[str, str | int | bool]:
    return {f"hitl.{name.replace('_', '.')}": value for name, value in more.items()}


def _parent(trace_parent: str) -> context.Context:
    # No kept traceparent (asked untraced): a root of its own, never the current request's.
    if not trace_parent:
        return context.Context()
    return _W3C.extract({"traceparent": trace_parent})
