"""A bridge in process, an MCP server asking it, and the console to answer with."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from mcp import Client
from mcp.types import CallToolResult

from adapters.mcp import BridgeTools, build_server
from bot.client import Bridge
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient

CONVERSATION = "mcp-1"
ROUTE = f"console:{CONVERSATION}"
DEPLOY = {
    "action": "deploy",
    "summary": "Deploy web 1.5 to prod",
    "arguments": {"service": "web", "version": "1.5"},
    "risk": "high",
}


async def approval_answered(
    door: Door, call: asyncio.Task[CallToolResult], answer: dict[str, Any]
) -> dict[str, Any]:
    """``answer`` the approval that ``call`` (request_approval, still waiting) asked on the
    door's console page; the tool's structured result, which must not be an error."""
    assert door.session is not None
    console = ConsoleClient(door.session, f"http://127.0.0.1:{door.port}")
    asked = await console.outstanding(CONVERSATION, "approval")
    await console.answer_ok(asked["token"], answer)
    result = await call
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@dataclass
class Rig:
    door: Door
    bridge: Bridge
    console: ConsoleClient
    asking: BridgeTools
    client: Client

    async def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's structured result; fails the test on a tool error."""
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return dict(result.structured_content)

    async def questions(self) -> list[dict[str, Any]]:
        page = await self.bridge.list()
        return [question.model_dump() for question in page.data]


@contextlib.asynccontextmanager
async def rig(folder: Path, *, wait_seconds: float = 30.0, **env: Any) -> AsyncIterator[Rig]:
    async with (
        Door(folder, **api_env("console:*"), **env) as door,
        Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge,
        aiohttp.ClientSession() as http,
    ):
        asking = BridgeTools(
            bridge_for=lambda _ctx: contextlib.nullcontext(bridge),
            scope_for=lambda _ctx: "test",
            route=ROUTE,
            answerers=("anyone",),
            wait_seconds=wait_seconds,
        )
        async with Client(build_server(asking), raise_exceptions=True) as client:
            console = ConsoleClient(http, f"http://127.0.0.1:{door.port}")
            yield Rig(door, bridge, console, asking, client)
