"""``/mcp/gateway`` on the bridge (``BOT_MCP_GATEWAY``), in front of an upstream served over
Streamable HTTP whose bearer token the file reads from the environment."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from adapters.mcp_gateway import GatewayConfigError
from tests import waiting
from tests.adapters.mcp_gateway._rig import CONVERSATION, ROUTE, UPSTREAM, text_of
from tests.doors._doors import Door, Logs
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient
from tests.e2e._server import free_port, logged_process

TOKEN = "upstream-secret-" + "t" * 24
DEPLOY = {"service": "web", "version": "2.0"}


@contextlib.contextmanager
def http_upstream(folder: Path) -> Iterator[str]:
    """upstream_server.py over Streamable HTTP on a free port, requiring ``TOKEN``; its URL."""
    port = free_port()
    env = {"UPSTREAM_TOKEN": TOKEN, "UPSTREAM_LOG": str(folder / "upstream.log"), "PATH": ""}
    child = logged_process(
        [sys.executable, str(UPSTREAM), "--http", str(port)], folder / "upstream.out", env=env
    )
    try:
        waiting.eventually_blocking(lambda: _listening(port), what="the upstream listening")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(10)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _file(folder: Path, url: str) -> Path:
    path = folder / "gateway.toml"
    path.write_text(
        "[gateway]\nwait_seconds = 30\n\n"
        f'[[upstreams]]\nname = "ops"\nurl = "{url}"\n'
        'headers = { Authorization = "Bearer ${OPS_TOKEN}" }\n\n'
        '[[rules]]\ntools = "ops__deploy"\naction = "approve"\n',
        encoding="utf-8",
    )
    return path


@contextlib.asynccontextmanager
async def _gateway_client(door: Door, key: str = API_KEY) -> AsyncIterator[Client]:
    url = f"http://127.0.0.1:{door.port}/mcp/gateway"
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_the_bridges_gateway_asks_and_forwards_to_an_http_upstream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP client on /mcp/gateway with its /v1 key: approve on the console, the HTTP
    upstream (reached with the token from the environment) runs the call once; the token is
    in no log line."""
    monkeypatch.setenv("OPS_TOKEN", TOKEN)
    with http_upstream(tmp_path) as url, Logs() as logs:
        env = {
            "BOT_MCP_GATEWAY": str(_file(tmp_path, url)),
            "BOT_MCP_ROUTE": ROUTE,
            "BOT_MCP_ANSWERERS": "anyone",
        }
        async with (
            Door(tmp_path, **api_env("console:*"), **env) as door,
            aiohttp.ClientSession() as http,
            _gateway_client(door) as client,
        ):
            names = {tool.name for tool in (await client.list_tools()).tools}
            call = asyncio.create_task(client.call_tool("ops__deploy", DEPLOY))
            console = ConsoleClient(http, f"http://127.0.0.1:{door.port}")
            asked = await console.outstanding(CONVERSATION, "approval")
            await console.answer_ok(asked["token"], {"decision": "approve"})
            result = await call
    assert {"ops__deploy", "ops__status"} <= names
    assert text_of(result) == "deployed web 2.0"
    assert (tmp_path / "upstream.log").read_text().splitlines() == ["deploy web 2.0"]
    logs.assert_clean()
    assert not any(TOKEN in line for line in logs.warnings)


async def test_the_gateway_without_a_key_is_401(tmp_path: Path) -> None:
    """/mcp/gateway behind the same key check as /mcp: a wrong key is refused."""
    file = tmp_path / "gateway.toml"
    file.write_text('[[upstreams]]\nname = "ops"\nurl = "http://127.0.0.1:9/mcp"\n')
    async with (
        Door(tmp_path, **api_env("console:*"), BOT_MCP_GATEWAY=str(file)) as door,
        aiohttp.ClientSession() as http,
    ):
        answer = await http.post(
            f"http://127.0.0.1:{door.port}/mcp/gateway",
            json={},
            headers={"Authorization": "Bearer wrong"},
        )
    assert answer.status == 401


async def test_a_rule_routing_where_no_key_may_post_stops_the_bridge_in_one_sentence(
    tmp_path: Path,
) -> None:
    """A rule's route no /v1 key may use: the bridge refuses to start, naming the rule."""
    file = tmp_path / "gateway.toml"
    file.write_text(
        '[[upstreams]]\nname = "ops"\nurl = "http://127.0.0.1:9/mcp"\n\n'
        '[[rules]]\ntools = "*"\naction = "approve"\nroute = "slack:C0OTHER"\n'
        'answerers = ["anyone"]\n'
    )
    with pytest.raises(GatewayConfigError) as refused:
        async with Door(tmp_path, **api_env("console:*"), BOT_MCP_GATEWAY=str(file)):
            pass
    assert str(refused.value).startswith(
        "rules[0].route: no agents API key may post to slack:C0OTHER"
    )
