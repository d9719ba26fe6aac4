"""A bridge in process (with its console to answer on), an upstream MCP server over stdio,
and the gateway between them, called by the ``mcp`` SDK's own client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.types import CallToolResult

from adapters.mcp_gateway import Caller, Gateway, load_gateway_file, new_gateway
from bot.client import Bridge
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "upstream_server.py"
CONVERSATION = "gateway-1"
ROUTE = f"console:{CONVERSATION}"


def gateway_toml(
    folder: Path,
    rules: str = "",
    *,
    wait_seconds: float = 30.0,
    upstream: str = "",
    legacy: bool = False,
    env: dict[str, str] | None = None,
) -> Path:
    """A gateway file with the stdio upstream ``ops`` (given ``env`` too) and ``rules``; its
    deploys are logged to ``folder/upstream.log``."""
    path = folder / "gateway.toml"
    command = [sys.executable, str(UPSTREAM), *(["--legacy"] if legacy else [])]
    given = {"UPSTREAM_LOG": str(folder / "upstream.log"), **(env or {})}
    table = ", ".join(f"{name} = {json.dumps(value)}" for name, value in given.items())
    path.write_text(
        f"[gateway]\nwait_seconds = {wait_seconds}\n\n"
        f'[[upstreams]]\nname = "ops"\ncommand = {_toml_list(command)}\n'
        f"env = {{ {table} }}\n{upstream}\n{rules}",
        encoding="utf-8",
    )
    return path


def deploys(folder: Path) -> list[str]:
    """The deploys the upstream ran, one line each."""
    log = folder / "upstream.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


@dataclass
class Rig:
    folder: Path
    door: Door
    bridge: Bridge
    console: ConsoleClient
    gateway: Gateway
    client: Client

    def call(self, name: str, arguments: dict[str, Any]) -> asyncio.Task[CallToolResult]:
        return asyncio.create_task(self.client.call_tool(name, arguments))

    async def answer(self, answer: dict[str, Any], *, kind: str = "approval") -> dict[str, Any]:
        """Answer the open question of ``kind`` on the console; the question as the feed has it."""
        asked = await self.console.outstanding(CONVERSATION, kind)
        await self.console.answer_ok(asked["token"], answer)
        return asked


def text_of(result: CallToolResult) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


@contextlib.asynccontextmanager
async def rig(
    folder: Path,
    rules: str = "",
    *,
    wait_seconds: float = 30.0,
    upstream: str = "",
    legacy: bool = False,
    env: dict[str, str] | None = None,
    door_for: Callable[[Path], AbstractAsyncContextManager[Door]] | None = None,
) -> AsyncIterator[Rig]:
    """The gateway before the upstream, asking a bridge served by ``door_for`` (a console
    ``Door`` by default)."""
    file = gateway_toml(
        folder, rules, wait_seconds=wait_seconds, upstream=upstream, legacy=legacy, env=env
    )
    config = load_gateway_file(file)
    served = Door(folder, **api_env("console:*")) if door_for is None else door_for(folder)
    async with (
        served as door,
        Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge,
        aiohttp.ClientSession() as http,
    ):
        gateway = new_gateway(config, data_dir=folder / "var", route=ROUTE, answerers=("anyone",))

        async def caller_for(_ctx: ServerRequestContext[Any, Any]) -> Caller:
            return Caller(client="test-agent", key="ci", scope="test")

        await gateway.start()
        try:
            server = gateway.server(
                bridge_for=lambda _ctx: contextlib.nullcontext(bridge), caller_for=caller_for
            )
            async with Client(server, raise_exceptions=True) as client:
                console = ConsoleClient(http, f"http://127.0.0.1:{door.port}")
                yield Rig(folder, door, bridge, console, gateway, client)
        finally:
            await gateway.close()
            gateway.journal.close()
