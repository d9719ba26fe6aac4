"""docs/api.md's quick start, run as written: its commands against a real bot process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests import waiting
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import ROOT, free_port
from tests.support import bot_command_env

pytestmark = pytest.mark.e2e

DOC = (ROOT / "docs" / "api.md").read_text()
BLOCKS = re.findall(r"```sh\n(.*?)```", DOC, re.S)
PYTHON = re.findall(r"```python\n(.*?)```", DOC, re.S)
DEFAULT = "127.0.0.1:3978"


def shell(script: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["/bin/bash", "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # one group: `make run` and its bot stop together
    )


def python(script: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def finished(process: subprocess.Popen[str]) -> str:
    """Its stdout, once it exits 0 with nothing left open (aiohttp warns of a session left
    open, "Unclosed client session", on stderr)."""
    out, err = await asyncio.to_thread(process.communicate, timeout=60)
    assert process.returncode == 0, err
    assert "Unclosed" not in err, err
    return out


async def answered_on_console(
    script: str, env: dict[str, str], console: ConsoleClient, kind: str, answer: dict[str, Any]
) -> str:
    """``script`` run while its question (``kind`` in ``agents``) is answered on the console
    page: what it printed."""
    client = python(script, env)
    try:
        asked = await console.outstanding("agents", kind)
        await console.answer_ok(asked["token"], answer)
        return await finished(client)
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()


async def test_the_quick_start_works_as_pasted(tmp_path: Path) -> None:
    """make run with the doc's key; the doc's POST, its wait, then its api-key commands."""
    start, ask, wait, keys = BLOCKS
    port = free_port()
    env = bot_command_env(
        f"sqlite:///{tmp_path / 'bot.sqlite3'}", tmp_path / "var", PORT=str(port), **OPERATOR
    )
    here = f"127.0.0.1:{port}"
    server = shell(start, env)
    try:
        await waiting.healthy(f"http://{here}", alive=lambda: server.poll() is None, seconds=60)
        async with aiohttp.ClientSession() as http:
            created = json.loads(await finished(shell(ask.replace(DEFAULT, here), env)))
            assert created["status"] == "open", created
            long_poll = shell(wait.replace(DEFAULT, here).replace("<id>", created["id"]), env)
            console = ConsoleClient(http, f"http://{here}")
            question = await console.outstanding("agents", "approval")
            await console.answer_ok(question["token"], APPROVE)
            answered = json.loads(await finished(long_poll))
            assert answered["status"] == "answered"
            assert answered["answer"] == {"decision": "approve", "comment": ""}
            # The Python client's quick start, as pasted, answered on the console page.
            answer = {"answers": {"Which environment?": "staging"}}
            script = PYTHON[0].replace(DEFAULT, here)
            printed = await answered_on_console(script, env, console, "ask_user", answer)
            assert printed.startswith("answered") and "staging" in printed, printed
            # The require_approval example, rejected: the function does not run.
            [guarded] = [block for block in PYTHON if "@require_approval" in block]
            rejected = {"decision": "reject", "comment": "not today"}
            script = guarded.replace(DEFAULT, here)
            printed = await answered_on_console(script, env, console, "approval", rejected)
            assert printed == "not approved: not today\n"
            made = await finished(shell(keys.replace(DEFAULT, here), env))
            assert made.startswith("hitl_") and "revoked ci" in made
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        await asyncio.to_thread(server.communicate, timeout=30)
