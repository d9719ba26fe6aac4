"""Traces configured by the standard OTEL_* variables, as `check` reports them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import bare_bot_env, run_bot

DOC = (Path(__file__).resolve().parents[2] / "docs" / "tracing.md").read_text()


def traces_line(folder: Path, **env: str) -> str:
    done = run_bot("check", env=bare_bot_env(folder, **env))
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("traces:")]
    return line


def test_traces_are_off_without_otel_variables(tmp_path: Path) -> None:
    """No OTEL_* variable: the API's no-op, and `check` says how to turn them on."""
    assert traces_line(tmp_path) == (
        "traces:   off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)"
    )
    assert traces_line(tmp_path, OTEL_SDK_DISABLED="true", OTEL_TRACES_EXPORTER="otlp") == (
        "traces:   off (OTEL_SDK_DISABLED=true)"
    )


def test_the_docs_endpoint_turns_on_otlp_as_the_page_shows(tmp_path: Path) -> None:
    """docs/tracing.md's variables, as exported there: `check` prints the page's line."""
    exported = dict(re.findall(r"^export (OTEL_\w+)=(\S+)$", DOC, re.M))
    assert set(exported) == {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME"}
    [shown] = re.findall(r"^traces: .*$", DOC, re.M)
    assert traces_line(tmp_path, **exported) == shown
    assert traces_line(tmp_path, OTEL_TRACES_EXPORTER="console") == "traces:   on (console)"


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER=zipkin is not an exporter"),
        (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: the otel extra exports OTLP over HTTP",
        ),
    ],
)
def test_an_exporter_the_bridge_lacks_is_one_line(
    tmp_path: Path, env: dict[str, str], said: str
) -> None:
    """A setting the bridge cannot honour stops it in one line, no traceback."""
    done = run_bot("check", env=bare_bot_env(tmp_path, **env))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(f"configuration error: {said}"), line
