"""The official MCP conformance suite against ``/mcp`` on a real ``python -m bot``.

The suite (pinned in ``tests/conformance/``, installed there by ``make test``
with ``npm ci``) cannot send a bearer key, so it calls a loopback proxy that
adds the key and passes everything else through as it came. Where the suite
names the proxy (its ``Host``, an ``Origin`` on it), the proxy names the
bridge instead, as a reverse proxy in front of the bridge would; any other
name (the DNS-rebinding scenario's) reaches the bridge unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tests.e2e._api import API_KEY, api_env
from tests.e2e._server import ROOT, BotServer, StartBot, free_port
from tests.loopback import serving

pytestmark = pytest.mark.e2e

SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")
CLI = ROOT / "tests" / "conformance" / "node_modules" / ".bin" / "conformance"
ON = {"BOT_MCP_HTTP": "true", "BOT_MCP_ROUTE": "console:ops", "BOT_MCP_ANSWERERS": "anyone"}
# Not passed on: the connection's own, and the key (the proxy sets it).
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "authorization"}


def _cli() -> Path:
    """The suite's command, or a skip (no Node.js, not under CI) or a failure saying what to do."""
    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("Node.js is missing: CI must run the MCP conformance suite")
        pytest.skip("Node.js is not installed: the MCP conformance suite needs it")
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: run make test (it runs npm ci in tests/conformance)")
    return CLI


@contextlib.asynccontextmanager
async def keyed_proxy(bot: BotServer) -> AsyncIterator[str]:
    """A loopback URL for ``/mcp`` that adds the bearer key to every request."""
    port = free_port()
    ours, theirs = f"127.0.0.1:{port}", f"127.0.0.1:{bot.port}"
    renamed = {ours: theirs, f"http://{ours}": f"http://{theirs}"}

    async def forward(request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        for name in ("Host", "Origin"):
            if name in headers:
                headers[name] = renamed.get(headers[name], headers[name])
        headers["Authorization"] = f"Bearer {API_KEY}"
        async with http.request(
            request.method,
            f"{bot.url}{request.rel_url}",
            headers=headers,
            data=await request.read(),
            allow_redirects=False,
        ) as answer:
            response = web.StreamResponse(status=answer.status)
            for name, value in answer.headers.items():
                if name.lower() not in _HOP_BY_HOP | {"content-encoding"}:
                    response.headers.add(name, value)
            await response.prepare(request)
            # An SSE answer goes on as the bridge writes it.
            async for chunk in answer.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    app = web.Application()
    app.router.add_route("*", "/mcp", forward)
    async with (
        aiohttp.ClientSession(auto_decompress=False) as http,
        serving(app, port, access_log=None) as url,
    ):
        yield f"{url}/mcp"


async def _run(cli: Path, url: str, scenario: str, results: Path) -> tuple[int, str, list[Any]]:
    """The suite's exit code, what it printed, and the checks it recorded for ``scenario``."""
    process = await asyncio.create_subprocess_exec(
        str(cli),
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "--output-dir",
        str(results),
        env={**os.environ, "NO_COLOR": "1"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    printed, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    return await process.wait(), printed.decode(errors="replace"), _checks(results)


def _checks(results: Path) -> list[Any]:
    return [
        check
        for path in sorted(results.rglob("checks.json"))
        for check in json.loads(path.read_text(encoding="utf-8"))
    ]


async def test_the_conformance_suite_passes_its_server_scenarios(
    start_bot: StartBot, tmp_path: Path
) -> None:
    """server-initialize, ping, tools-list and dns-rebinding-protection: every check a SUCCESS."""
    cli = _cli()
    bot = await start_bot(**api_env("console:*"), **ON)
    failed: dict[str, Any] = {}
    async with keyed_proxy(bot) as url:
        for scenario in SCENARIOS:
            code, printed, checks = await _run(cli, url, scenario, tmp_path / scenario)
            bad = [c for c in checks if c.get("status") != "SUCCESS"]
            if code != 0 or bad or not checks:
                failed[scenario] = {"exit": code, "failed": bad, "printed": printed[-2000:]}
    assert not failed, json.dumps(failed, indent=1)
