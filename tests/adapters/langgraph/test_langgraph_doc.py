"""docs/agents/langgraph.md's quick start and its edit example, run as pasted against the
real app and answered on the console."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Any

import aiohttp

from tests.doors._doors import Door
from tests.e2e._api import API_KEY
from tests.e2e._client import APPROVE, ConsoleClient, approve_while_it_waits
from tests.e2e._server import ROOT

DOC = (ROOT / "docs" / "agents" / "langgraph.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC, re.S)
QUICK_START = EXAMPLES[0]
[EDIT] = [code for code in EXAMPLES if '"allowed_decisions": ["approve", "edit"' in code]


async def _run_pasted(door: Door, code: str, answer: dict[str, Any]) -> str:
    """Run ``code`` in a process of its own, give its approval ``answer``; what it printed."""
    url = f"http://127.0.0.1:{door.port}"
    env = {**os.environ, "BRIDGE_URL": url, "BRIDGE_API_KEY": API_KEY}
    script = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        out, _ = await approve_while_it_waits(script, ConsoleClient(http, url), "agents", answer)
    return out


async def test_the_quick_start_asks_in_the_console_and_deploys_once_approved(door: Door) -> None:
    """The pasted script parks on its approval; approving it in the console lets it deploy."""
    out = await _run_pasted(door, QUICK_START, APPROVE)
    assert out.startswith("deployed 1.5, approved by "), out


async def test_the_edit_example_runs_deploy_with_the_approvers_version(door: Door) -> None:
    """The approver edits version 1.5 to 1.4 on the console: the middleware runs deploy with
    1.4, and the script prints what the model read: LangChain's note of the arguments that
    ran, then what deploy returned."""
    edit = {"decision": "edit", "arguments": {"service": "web", "version": "1.4"}}
    printed = await _run_pasted(door, EDIT, edit)
    assert 'Executed instead: deploy with arguments {"service": "web", "version": "1.4"}' in (
        printed
    )
    assert printed.endswith("\ndeployed web 1.4\n"), printed
