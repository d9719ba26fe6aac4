"""docs/agents/langgraph.md's quick start, run as pasted against the real app."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, ConsoleClient
from tests.e2e._server import ROOT

DOC = (ROOT / "docs" / "agents" / "langgraph.md").read_text()
QUICK_START = re.findall(r"```python\n(.*?)```", DOC, re.S)[0]


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    async with Door(tmp_path, **api_env("console:*")) as served:
        yield served


async def test_the_quick_start_asks_in_the_console_and_deploys_once_approved(door: Door) -> None:
    """The pasted script parks on its approval; approving it in the console lets it deploy."""
    url = f"http://127.0.0.1:{door.port}"
    env = {**os.environ, "BRIDGE_URL": url, "BRIDGE_API_KEY": API_KEY}
    script = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        QUICK_START,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            console = ConsoleClient(http, url)
            question = await console.outstanding("agents", "approval")
            assert question["payload"]["arguments"] == {"service": "web", "version": "1.5"}
            await console.answer_ok(question["token"], APPROVE)
        out, err = await asyncio.wait_for(script.communicate(), 60)
    finally:
        if script.returncode is None:
            script.kill()
            await script.wait()
    assert script.returncode == 0, err.decode()
    assert out.decode().startswith("deployed 1.5, approved by "), out
