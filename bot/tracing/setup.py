"""OpenTelemetry's SDK configured from the standard ``OTEL_*`` variables (the otel extra).

Traces are on when ``OTEL_TRACES_EXPORTER`` names an exporter or an OTLP
endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``..._TRACES_ENDPOINT``);
``OTEL_SDK_DISABLED=true`` turns them off. The SDK and the exporter read the
rest themselves (headers, timeouts, ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, the batch processor's ``OTEL_BSP_*``). A
process already given a tracer provider (run under ``opentelemetry-instrument``)
keeps it. Imported only when traces are asked for: the server itself imports
the API alone (``bot.tracing``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from opentelemetry import trace

from bot.errors import BotError, install_extra
from bot.tracing._spans import on as tracing_on

SERVICE_NAME = "hitl-bridge"
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_EXPORTERS = ("otlp", "console")


@dataclass(frozen=True, slots=True)
class Traces:
    """What the process does with its spans (a few words for the log and ``check``), and
    how to flush them at exit."""

    state: str
    shutdown: Callable[[], None] = lambda: None
    exporting: bool = False


def configure(environ: Mapping[str, str] | None = None) -> Traces:
    """Install a tracer provider exporting as ``OTEL_*`` say; BotError on a bad setting."""
    environ = os.environ if environ is None else environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return Traces("off (OTEL_SDK_DISABLED=true)")
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    endpoint = next((environ[name] for name in _ENDPOINTS if environ.get(name)), "")
    if exporter == "none" or not (exporter or endpoint):
        return Traces("off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)")
    exporter = exporter or "otlp"
    if exporter not in _EXPORTERS:
        raise BotError(
            f"OTEL_TRACES_EXPORTER={exporter} is not an exporter this bridge has; use otlp "
            "(OTLP over HTTP), console or none"
        )
    protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip()
    if exporter == "otlp" and protocol != "http/protobuf":
        raise BotError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: the otel extra exports OTLP over HTTP; "
            "use http/protobuf (and the collector's HTTP port, 4318)"
        )
    if tracing_on():
        return Traces("on (the tracer provider this process was started with)", exporting=True)
    return _install(exporter, endpoint, environ)


def _install(exporter: str, endpoint: str, environ: Mapping[str, str]) -> Traces:
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SpanExporter,
        )
    except ModuleNotFoundError as missing:
        raise BotError(
            f"traces are asked for (OTEL_*) but the package {missing.name!r} is missing; "
            f"install the otel extra ({install_extra('otel')}), or unset the OTEL_ variables"
        ) from None
    sink: SpanExporter
    if exporter == "console":
        sink, where = ConsoleSpanExporter(), "console"
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ModuleNotFoundError as missing:
            raise BotError(
                f"OTEL_TRACES_EXPORTER=otlp needs the package {missing.name!r}; install the "
                f"otel extra ({install_extra('otel')})"
            ) from None
        sink, where = OTLPSpanExporter(), f"otlp to {endpoint or 'http://localhost:4318'}"
    # OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) wins over ours.
    named = environ.get("OTEL_SERVICE_NAME") or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    resource = Resource.create({} if named else {"service.name": SERVICE_NAME})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(sink))
    trace.set_tracer_provider(provider)
    return Traces(f"on ({where})", provider.shutdown, exporting=True)
