"""A second real client from another SDK: the TypeScript SDK's ``Client`` over stdio calls
``python -m bot mcp-gateway`` (tests/mcp_gateway_client, pinned by its lock file)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.adapters.mcp_gateway._rig import CONVERSATION, ROUTE, deploys, gateway_toml
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / "tests" / "mcp_gateway_client"
RULE = '[[rules]]\ntools = "ops__deploy"\naction = "approve"\n'


def _node() -> str:
    """Node.js, or a skip (not installed, not under CI) or a failure saying what to do."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("Node.js is missing: CI must run the TypeScript client of the gateway")
        pytest.skip("Node.js is not installed: the TypeScript MCP client needs it")
    if not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        pytest.fail(f"{CLIENT}/node_modules is missing: run make test (it runs npm ci there)")
    return node


async def test_the_typescript_sdks_client_calls_through_the_gateway(tmp_path: Path) -> None:
    """The TypeScript client lists the prefixed tools and its deploy waits for the console;
    Approve runs it once and the client reads the upstream's result."""
    node = _node()
    async with Door(tmp_path, **api_env("console:*")) as door:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT),
            "BOT_LOG_LEVEL": "WARNING",
            "BOT_DATA_DIR": str(tmp_path / "gateway-var"),
            "BOT_MCP_GATEWAY": str(gateway_toml(tmp_path, RULE)),
            "BOT_MCP_BRIDGE_URL": f"http://127.0.0.1:{door.port}",
            "BOT_MCP_API_KEY": API_KEY,
            "BOT_MCP_ROUTE": ROUTE,
            "BOT_MCP_ANSWERERS": "anyone",
        }
        script = await asyncio.create_subprocess_exec(
            node,
            str(CLIENT / "client.mjs"),
            "ops__deploy",
            json.dumps({"service": "web", "version": "1.5"}),
            cwd=CLIENT,
            env={
                "PATH": env["PATH"],
                "GATEWAY_COMMAND": json.dumps([sys.executable, "-m", "bot", "mcp-gateway"]),
                "GATEWAY_ENV": json.dumps(env),
            },
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            assert door.session is not None
            console = ConsoleClient(door.session, f"http://127.0.0.1:{door.port}")
            asked = await console.outstanding(CONVERSATION, "approval")
            await console.answer_ok(asked["token"], {"decision": "approve"})
            out, err = await asyncio.wait_for(script.communicate(), 60)
        finally:
            if script.returncode is None:
                script.kill()
                await script.wait()
    assert script.returncode == 0, err.decode()
    printed = json.loads(out.decode().strip().splitlines()[-1])
    assert "ops__deploy" in printed["tools"] and "ops__status" in printed["tools"]
    assert not printed["result"].get("isError")
    assert printed["result"]["content"][0]["text"] == "deployed web 1.5"
    assert deploys(tmp_path) == ["deploy web 1.5"]
