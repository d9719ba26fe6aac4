"""One trace per question, written with OpenTelemetry's API only.

Without an SDK (or with one the process never configured) every call here
is the API's no-op: nothing is recorded, nothing exported, no traceparent
kept. ``bot.tracing.setup`` configures the SDK from the standard ``OTEL_*``
variables when the ``otel`` extra is installed.

The spans of a question: ``question.asked`` (its parent: the ``/v1``
request's ``traceparent``, so an agent's trace continues into the bridge),
then ``question.posted`` per route, ``question.vote`` per ballot under a
quorum, ``question.answer`` and ``question.closed``, ``webhook.delivered``
and ``run.resumed``. Those later steps happen in other requests, other
replicas, hours later, so no Python span can stay open across them: the
asked span's traceparent is kept on the question's row (``trace_parent``),
and each step starts a span whose parent it is. Attributes are ids only
(question, run, route), the kind and the status: never a payload, an
answer's text, a token or a URL.
"""

from bot.tracing._spans import (
    TRACER,
    TracedQuestion,
    asked,
    failed,
    ids,
    incoming,
    now,
    on,
    outgoing,
    record,
    route_of,
    step,
)

__all__ = [
    "TRACER",
    "TracedQuestion",
    "asked",
    "failed",
    "ids",
    "incoming",
    "now",
    "on",
    "outgoing",
    "record",
    "route_of",
    "step",
]
