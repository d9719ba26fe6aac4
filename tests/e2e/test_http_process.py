"""The HTTP surface of a real `python -m bot`: logs, slow clients, a busy port, signals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import aiohttp
import pytest

from tests import waiting
from tests.e2e._client import STAGING, ConsoleClient
from tests.e2e._server import ROOT, BotServer, StartBot, free_port, json_lines, logged_process
from tests.loopback import serving
from tests.support import run_bot

pytestmark = pytest.mark.e2e

SLOW_CLIENTS = 40
# A bound on how long the server may hold a half-sent request, not a speed check.
CLOSE_BOUND_SECONDS = 20.0


async def test_a_token_in_a_url_referer_or_user_agent_reaches_no_log_field(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """At DEBUG, a live token offered in a URL, a Referer and a User-Agent is in no log line."""
    server = await start_bot(BOT_LOG_LEVEL="DEBUG")
    api = ConsoleClient(http, server.url)
    ask = await api.asked("ops")
    token = ask["token"]
    signature = token.rsplit(".", 1)[1]

    carriers = {"Referer": f"{server.url}/?token={token}", "User-Agent": f"agent {token}"}
    async with http.get(f"{server.url}/api/answer?token={token}", headers=carriers) as refused:
        assert refused.status == 400
        assert "never accepted in a URL" in (await refused.json())["error"]
    async with http.get(f"{server.url}/?next={token}", headers=carriers) as page:
        assert page.status == 400
    async with http.post(
        f"{server.url}/api/answer?t={token}", json={"token": token, "answer": STAGING}
    ) as posted:
        assert posted.status == 400
    async with http.get(f"{server.url}/api/conversations/ops", headers=carriers) as feed:
        assert feed.status == 200
    # The question is still open: nothing offered in a URL was spent.
    await api.answer_ok(token, STAGING)
    assert await server.terminate(within=30) == 0

    records = json_lines(server.log_text())
    access = [r for r in records if r.get("logger") == "aiohttp.access"]
    assert len(access) >= 5, "no access lines: the scan below would prove nothing"
    assert {"path": "/api/answer", "status": 400} in [
        {"path": r.get("path"), "status": r.get("status")} for r in access
    ]
    for record in records:
        flat = json.dumps(record)
        assert signature not in flat, record
        assert "token=" not in flat, record
    assert "Traceback" not in server.log_text()


async def test_each_step_of_a_run_is_a_log_line(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """started, asked, answered (by whom), resumed, completed: each a line with the run id."""
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    run, _ = await api.deploy_to_staging("ops")
    assert await server.terminate(within=30) == 0
    steps = [
        (r["event"], r.get("by", ""))
        for r in json_lines(server.log_text())
        if r.get("logger") == "bot.run_events" and r.get("run_id") == run["run_id"]
    ]
    assert [event for event, _ in steps] == [
        "started",
        "asked",
        "answered",
        "resumed",
        "asked",
        "answered",
        "resumed",
        "completed",
    ]
    operator = next(by for event, by in steps if event == "answered")
    assert operator, "answered lines name who answered"


async def test_half_sent_requests_are_closed_while_health_answers(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Clients that stop mid-headers or mid-body are cut off; /healthz answers throughout."""
    server = await start_bot(
        BOT_HEADER_TIMEOUT_SECONDS="1", BOT_BODY_TIMEOUT_SECONDS="1", BOT_LOG_LEVEL="DEBUG"
    )
    host = f"127.0.0.1:{server.port}"
    head_only = f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode()
    body_part = (
        f"POST /api/answer HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        'Content-Length: 500\r\n\r\n{"token": "'
    ).encode()
    sockets = []
    for i in range(SLOW_CLIENTS):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(head_only if i % 2 else body_part)
        sockets.append(sock)
    try:
        api = ConsoleClient(http, server.url)
        assert await api.healthz() == 200
        endings = await asyncio.gather(*(asyncio.to_thread(_read_to_close, s) for s in sockets))
        assert await api.healthz() == 200
    finally:
        for sock in sockets:
            sock.close()
    for i, ending in enumerate(endings):
        if i % 2:
            assert ending == b"", ending  # headers never finished: closed without a reply
        else:
            assert ending.startswith(b"HTTP/1.1 408 "), ending
    # A client that walks away mid-body is a DEBUG line, never an error with a traceback.
    abandoned = socket.create_connection(("127.0.0.1", server.port))
    abandoned.sendall(body_part)
    abandoned.close()
    assert await ConsoleClient(http, server.url).healthz() == 200
    assert await server.terminate(within=30) == 0
    log = server.log_text()
    assert "Traceback" not in log
    records = json_lines(log)
    assert not [r for r in records if r.get("level") in {"error", "critical"}]
    late = [r for r in records if r.get("logger") == "bot.serving._guards"]
    assert len(late) >= SLOW_CLIENTS // 2, "each late or abandoned body is one line"
    assert all(r["level"] == "debug" and "error" not in r for r in late), late


def _read_to_close(sock: socket.socket) -> bytes:
    sock.settimeout(CLOSE_BOUND_SECONDS)
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


async def test_a_busy_port_is_one_line_and_exit_2(start_bot: StartBot, tmp_path: Path) -> None:
    """A second bot on a port in use says so in one line and exits 2, logging nothing else."""
    first = await start_bot()
    second = BotServer(tmp_path / "second")
    env = {**second.env, "PORT": str(first.port)}
    result = await asyncio.to_thread(run_bot, cwd=ROOT, env=env)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert f"127.0.0.1:{first.port} is already in use" in line
    assert first.running


@pytest.mark.parametrize("via_make", [False, True])
async def test_sigterm_twice_still_exits_0_cleanly(tmp_path: Path, via_make: bool) -> None:
    """Two SIGTERMs to the process group (directly, or under `make run`) exit 0, no traceback."""
    folder = tmp_path / "bot"
    env = BotServer(folder).env
    env["PORT"] = str(free_port())
    command = ["make", "--no-print-directory", "run"] if via_make else [sys.executable, "-m", "bot"]
    log_path = folder / "run.log"
    process = logged_process(command, log_path, env=env, own_group=True)
    try:
        await _wait_healthy(f"http://127.0.0.1:{env['PORT']}", process)
        os.killpg(process.pid, signal.SIGTERM)
        # The second lands once the first is being handled, during the shutdown.
        await waiting.eventually(
            lambda: "stopping: " in log_path.read_text(errors="replace"),
            what="the first SIGTERM handled",
        )
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        code = await asyncio.to_thread(process.wait, 30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = log_path.read_text(errors="replace")
    if via_make:
        # make itself re-raises the signal it got (GNU make always does); the bot under it
        # must still have stopped cleanly, which make would otherwise report as "Error 1".
        assert code == -signal.SIGTERM, text
        assert "Error" not in text, text
    else:
        assert code == 0, text
    assert "Traceback" not in text
    assert "Event loop stopped" not in text
    assert any(r.get("message") == "stopped cleanly" for r in json_lines(text)), text


async def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    await waiting.healthy(url, alive=lambda: process.poll() is None)


@pytest.mark.parametrize(
    ("answer_status", "expected"),
    [(None, "cannot reach"), (401, "refused OPENAI_API_KEY"), (404, "answered HTTP 404")],
)
async def test_check_validates_the_model_url(
    tmp_path: Path, answer_status: int | None, expected: str
) -> None:
    """`check` asks OPENAI_BASE_URL for its models: unreachable, bad key, wrong path each fail."""
    from aiohttp import web

    port = free_port()
    async with AsyncExitStack() as model_server:
        if answer_status is not None:
            status = answer_status

            async def models(_request: web.Request) -> web.Response:
                return web.json_response({}, status=status)

            app = web.Application()
            app.router.add_get("/v1/models", models)
            await model_server.enter_async_context(serving(app, port))
        result = await asyncio.to_thread(
            run_bot,
            "check",
            cwd=ROOT,
            env={
                "PATH": os.environ["PATH"],
                "DATABASE_URL": f"sqlite:///{tmp_path}/bot.sqlite3",
                "BOT_DATA_DIR": str(tmp_path / "var"),
                "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                "OPENAI_API_KEY": "sk-test-key-not-real",
            },
        )
    assert result.returncode == 2, result
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("configuration error: OPENAI_BASE_URL: ")
    assert expected in line
    assert "sk-test-key-not-real" not in result.stderr + result.stdout


async def test_a_rebound_host_reads_no_token(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """The issue's reproduction: a foreign Host on a real bot gets 421 and no token, SSE too."""
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    token = (await api.asked("ops"))["token"]
    evil = {"Host": f"evil.example:{server.port}"}
    for path in ["/api/conversations/ops", "/api/conversations", "/api/events", "/", "/metrics"]:
        async with http.get(f"{server.url}{path}", headers=evil) as response:
            assert response.status == 421, path
            assert token not in await response.text()
    async with http.post(
        f"{server.url}/api/answer",
        json={"token": token, "answer": STAGING},
        headers={**evil, "Origin": f"http://evil.example:{server.port}"},
    ) as answered:
        assert answered.status == 421
    # Nothing was spent: the operator still answers it.
    await api.answer_ok(token, STAGING)


async def test_deep_json_is_a_400_sentence_on_a_real_bot(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """JSON nested 5,000 levels deep is one 400 sentence, no traceback; the bot goes on."""
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    deep = ('{"token": "x", "answer": ' + "[" * 5000 + "]" * 5000 + "}").encode()
    for path in ["/api/answer", "/api/conversations/ops/messages"]:
        status, body = await api.post_raw(path, deep)
        assert status == 400, body
        assert "nested too deeply" in body["error"]
    await api.deploy_to_staging("ops")
    assert await server.terminate(within=30) == 0
    assert "Traceback" not in server.log_text()
