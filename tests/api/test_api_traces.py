"""One trace per question: an agent's /v1 request carrying ``traceparent`` to the webhook.

The bridge runs in this process (``create_app`` on a loopback port) so the
SDK's in-memory exporter sees its spans; requests go over real HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util._once import Once

from tests import waiting
from tests.e2e._api import API_KEY, WEBHOOK_SECRET, Api, api_env, approval, webhook_receiver
from tests.e2e._client import APPROVE, STAGING, ConsoleClient
from tests.e2e._server import free_port
from tests.support import app_server

SUMMARY = "Deploy web 1.5 to prod"  # the approval's payload text (tests.e2e._api.approval)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """An SDK provider exporting to memory, installed for this test only.

    The API lets a process set its provider once; the test puts the unset
    state back afterwards so no other test runs with tracing on.
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace.set_tracer_provider(provider)
    yield exporter
    provider.shutdown()
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE = saved


@pytest.fixture
async def bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """The bridge's app on a loopback port: the agents API, webhooks, the console."""
    monkeypatch.chdir(tmp_path)
    server = app_server(tmp_path, **api_env("console:*"))
    await server.start_server()
    yield f"http://127.0.0.1:{server.port}"
    await server.close()


def named(found: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in found if span.name == name]


async def test_an_approval_is_one_trace_from_the_agents_request_to_the_webhook(
    spans: InMemorySpanExporter, bridge: str
) -> None:
    """Asked under the agent's span; posted, answered, closed, delivered under the asked span."""
    agent = trace.get_tracer("agent").start_span("agent.run")
    headers: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(headers, trace.set_span_in_context(agent))
    async with (
        webhook_receiver(free_port()) as receiver,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as http,
    ):
        api = Api(http, bridge)
        api.headers |= headers
        created = await api.created(
            approval(
                "traced", {"surface": "console", "conversation": "c1"}, callback_url=receiver.url
            )
        )
        console = ConsoleClient(http, bridge)
        question = await console.outstanding("c1", "approval")
        await console.answer_ok(question["token"], APPROVE)
        await asyncio.wait_for(receiver.arrived.wait(), 15)
    agent.end()

    def delivered() -> bool:
        return bool(named(list(spans.get_finished_spans()), "webhook.delivered"))

    await waiting.eventually(delivered, what="the webhook's span")
    found = list(spans.get_finished_spans())
    [asked] = named(found, "question.asked")
    trace_id = agent.get_span_context().trace_id
    assert asked.context.trace_id == trace_id
    assert asked.parent is not None and asked.parent.span_id == agent.get_span_context().span_id
    steps = ["question.posted", "question.answer", "question.closed", "webhook.delivered"]
    for name in steps:
        [span] = named(found, name)
        assert span.context.trace_id == trace_id, name
        assert span.parent is not None and span.parent.span_id == asked.context.span_id, name
        assert span.attributes is not None
        assert span.attributes["hitl.question.id"] == created["id"], name
    for routed in (asked, *named(found, "question.posted")):
        assert routed.attributes is not None and routed.attributes["hitl.route"] == "console:c1"
    [closed] = named(found, "question.closed")
    assert closed.attributes is not None and closed.attributes["hitl.question.status"] == "answered"
    # The receiver's handler continues the same trace.
    [sent] = receiver.traceparents
    assert sent.split("-")[1] == f"{trace_id:032x}"
    # No attribute carries the payload's text, the answer, a token or a secret.
    secrets = [SUMMARY, "deploy", question["token"], API_KEY, WEBHOOK_SECRET, receiver.url]
    for span in found:
        for key, value in (span.attributes or {}).items():
            for secret in secrets:
                assert secret not in str(value), (span.name, key)


async def test_a_chat_run_resumes_in_its_question_s_trace(
    spans: InMemorySpanExporter, bridge: str
) -> None:
    """The demo's question, answered in the console: run.resumed is a child of its asked span;
    the approval the resumed run asks next is a trace of its own."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as http:
        console = ConsoleClient(http, bridge)
        ask = await console.asked("ops")
        await console.answer_ok(ask["token"], STAGING)
        second = await console.outstanding("ops", "approval")

    def resumed() -> bool:
        return bool(named(list(spans.get_finished_spans()), "run.resumed"))

    await waiting.eventually(resumed, what="the resume's span")
    found = list(spans.get_finished_spans())
    first = next(s for s in named(found, "question.asked") if _id(s) == ask["interrupt_id"])
    [resume] = named(found, "run.resumed")
    assert resume.parent is not None and resume.parent.span_id == first.context.span_id
    assert resume.context.trace_id == first.context.trace_id
    assert _id(resume) == ask["interrupt_id"]
    after = next(s for s in named(found, "question.asked") if _id(s) == second["interrupt_id"])
    assert after.parent is None and after.context.trace_id != first.context.trace_id


def _id(span: ReadableSpan) -> Any:
    return (span.attributes or {}).get("hitl.question.id")
