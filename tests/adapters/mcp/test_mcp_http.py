"""``/mcp`` on the bridge: Streamable HTTP behind the ``/v1`` keys, mounted only when on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.client import ConnectMode
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.adapters.mcp._harness import DEPLOY, ROUTE, approval_answered
from tests.doors._doors import Door, Logs
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE

ACCEPT = "application/json, text/event-stream"
ON = {"BOT_MCP_HTTP": "true", "BOT_MCP_ROUTE": ROUTE, "BOT_MCP_ANSWERERS": "anyone"}
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
).encode()


async def _raw(door: Door, *headers: bytes, body: bytes, expect: bool = False) -> tuple[int, bytes]:
    """POST /mcp byte for byte; with ``expect``, the body goes only after the 100 Continue."""
    reader, writer = await asyncio.open_connection("127.0.0.1", door.port)
    head = [
        b"POST /mcp HTTP/1.1",
        b"Host: 127.0.0.1:%d" % door.port,
        b"Content-Type: application/json",
        b"Accept: " + ACCEPT.encode(),
        b"Content-Length: %d" % len(body),
        b"Connection: close",
        *([b"Expect: 100-continue"] if expect else []),
        *headers,
    ]
    writer.write(b"\r\n".join(head) + b"\r\n\r\n")
    if expect:
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 100 ")
    writer.write(body)
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@contextlib.asynccontextmanager
async def _client(door: Door, *, mode: ConnectMode = "auto") -> AsyncIterator[Client]:
    url = f"http://127.0.0.1:{door.port}/mcp"
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {API_KEY}"}) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_tool_call_over_streamable_http_waits_for_the_console(
    tmp_path: Path, mode: ConnectMode
) -> None:
    """request_approval on /mcp (2026 and 2025-era clients): paused until Approve, approved."""
    async with (
        Door(tmp_path, **api_env("console:*"), **ON) as door,
        _client(door, mode=mode) as client,
    ):
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"ask_human", "request_approval", "get_answer"}
        call = asyncio.create_task(client.call_tool("request_approval", DEPLOY))
        assert (await approval_answered(door, call, APPROVE))["approved"] is True


async def test_a_call_the_bridge_refuses_is_its_sentence_over_streamable_http(
    tmp_path: Path,
) -> None:
    """ask_human with no questions on /mcp: is_error with the /v1 sentence, no error logged."""
    with Logs() as logs:
        async with (
            Door(tmp_path, **api_env("console:*"), **ON) as door,
            _client(door) as client,
        ):
            result = await client.call_tool("ask_human", {"questions": []})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "questions: List should have at least 1 item" in text, text
    logs.assert_clean()


async def test_a_body_sent_after_the_headers_reaches_the_sdk(tmp_path: Path) -> None:
    """The body guard reads a body that comes after its headers; the SDK gets those bytes."""
    auth = b"Authorization: Bearer " + API_KEY.encode()
    with Logs() as logs:
        async with Door(tmp_path, **api_env("console:*"), **ON) as door:
            status, body = await _raw(door, auth, body=INITIALIZE, expect=True)
    assert status == 200, body
    assert b'"serverInfo"' in body and b"Parse error" not in body
    logs.assert_clean()


async def test_header_bytes_that_are_not_ascii_are_no_500(tmp_path: Path) -> None:
    """Non-ASCII bytes reach the SDK as they came (200); in the key they are a wrong key (401)."""
    auth = b"Authorization: Bearer " + API_KEY.encode()
    with Logs() as logs:
        async with Door(tmp_path, **api_env("console:*"), **ON) as door:
            for header in (b"X-Note: caf\xc3\xa9", b"User-Agent: \xe2\x82\xac", b"X-Raw: \xff\xfe"):
                status, body = await _raw(door, auth, header, body=INITIALIZE)
                assert status == 200 and b'"serverInfo"' in body, (header, body)
            for key in (
                b"Bearer \xff" + API_KEY.encode(),
                b"Bearer " + API_KEY.encode() + b"\xc3\xa9",
            ):
                status, body = await _raw(door, b"Authorization: " + key, body=INITIALIZE)
                assert status == 401 and json.loads(body)["error"]["code"] == "unauthorized"
    logs.assert_clean()


async def test_mcp_from_a_page_on_another_site_is_403(tmp_path: Path) -> None:
    """An Origin this bridge does not serve is refused before the key is looked at; ours passes."""
    auth = b"Authorization: Bearer " + API_KEY.encode()
    async with Door(tmp_path, **api_env("console:*"), **ON) as door:
        status, body = await _raw(door, auth, b"Origin: http://evil.example", body=INITIALIZE)
        assert status == 403 and json.loads(body)["error"]["code"] == "forbidden"
        status, body = await _raw(door, b"Origin: http://evil.example", body=INITIALIZE)
        assert status == 403
        ours = b"Origin: http://127.0.0.1:%d" % door.port
        status, body = await _raw(door, auth, ours, body=INITIALIZE)
        assert status == 200 and b'"serverInfo"' in body


async def test_mcp_without_a_key_or_with_a_wrong_one_is_401(tmp_path: Path) -> None:
    """No bearer key, or one the bridge does not hold: 401 with the API's envelope."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    async with Door(tmp_path, **api_env("console:*"), **ON) as door:
        status, text = await door.send("/mcp", body, headers=headers)
        assert status == 401 and json.loads(text)["error"]["code"] == "unauthorized"
        wrong = headers | {"Authorization": "Bearer " + "w" * 40}
        status, text = await door.send("/mcp", body, headers=wrong)
        assert status == 401 and json.loads(text)["error"]["code"] == "unauthorized"


async def test_bad_requests_to_mcp_are_4xx_and_log_no_error(tmp_path: Path) -> None:
    """Not JSON: 400; a GET stream or a DELETE (stateless): 405; too large: 413; a clean log."""
    auth = {"Authorization": f"Bearer {API_KEY}"}
    posted = auth | {"Content-Type": "application/json", "Accept": ACCEPT}
    with Logs() as logs:
        async with Door(tmp_path, **api_env("console:*"), **ON) as door:
            status, text = await door.send("/mcp", b"not json", headers=posted)
            assert status == 400 and json.loads(text)["error"]["code"] == -32700
            for method in ("GET", "DELETE"):
                status, _ = await door.send("/mcp", headers=auth, method=method)
                assert status == 405
            status, _ = await door.send("/mcp", b"[" * 100_000, headers=posted)
            assert status == 413
    logs.assert_clean()


async def test_mcp_is_not_served_unless_it_is_turned_on(tmp_path: Path) -> None:
    """Without BOT_MCP_HTTP there is no /mcp route."""
    async with Door(tmp_path, **api_env("console:*")) as door:
        status, _ = await door.send("/mcp", b"{}", headers={"Authorization": f"Bearer {API_KEY}"})
        assert status == 404


def test_importing_the_server_loads_no_mcp_module() -> None:
    """``import bot.app`` (and the settings that name BOT_MCP_*) loads neither mcp nor the SDK."""
    probe = (
        "import sys, bot.app, bot.app.settings; bot.app.settings.load_settings(); "
        "print([m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types') "
        "or m.startswith('adapters.mcp._')])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_mcp_turned_on_without_the_extra_is_one_configuration_sentence(tmp_path: Path) -> None:
    """BOT_MCP_HTTP on, the SDK missing: create_app refuses in one sentence naming the extra."""
    probe = (
        "import sys; sys.modules['mcp'] = None\n"
        "from bot.app import create_app\nfrom bot.app.settings import load_settings\n"
        "from bot.errors import BotError\n"
        f"s = load_settings(BOT_MCP_HTTP='true', DATABASE_URL='sqlite:///{tmp_path}/b.db', "
        f"BOT_DATA_DIR='{tmp_path}/var')\n"
        "try:\n    create_app(s)\nexcept BotError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "BOT_MCP_HTTP is on" in done.stdout and "mcp extra" in done.stdout, done.stdout
