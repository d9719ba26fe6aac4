"""docs/agents/langgraph.md's quick start, run as pasted against the real app."""

from __future__ import annotations

import asyncio
import os
import re
import sys

import aiohttp

from tests.doors._doors import Door
from tests.e2e._api import API_KEY
from tests.e2e._client import APPROVE, ConsoleClient, approve_while_it_waits
from tests.e2e._server import ROOT

DOC = (ROOT / "docs" / "agents" / "langgraph.md").read_text()
QUICK_START = re.findall(r"```python\n(.*?)```", DOC, re.S)[0]


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
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        out, _ = await approve_while_it_waits(script, ConsoleClient(http, url), "agents", APPROVE)
    assert out.startswith("deployed 1.5, approved by "), out
