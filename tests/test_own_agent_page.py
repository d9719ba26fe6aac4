"""docs/own-agent.md as pasted: its agent served by a real `python -m bot` and answered on the
console, its check and error lines, and its pytest example; each twice in one folder, as a
reader runs a page again."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e._client import OPERATOR, ConsoleClient
from tests.e2e._server import BotServer
from tests.test_readme_steps import bash, commented

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "own-agent.md"
AGENT_FILE, TEST_FILE = "my_agent.py", "test_my_agent.py"


def block(language: str, containing: str) -> str:
    """The page's one ``language`` block that holds ``containing``."""
    found = re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)
    [only] = [text for text in found if containing in text]
    return str(only)


def paste(folder: Path) -> dict[str, str]:
    """The page's two files saved where it says (the folder the bridge starts in), and the
    environment of a reader's shell there, where ``.venv/bin/python`` is this checkout's."""
    folder.mkdir(exist_ok=True)
    (folder / AGENT_FILE).write_text(block("python", "def agent(settings: Settings)"))
    (folder / TEST_FILE).write_text(block("python", "def test_an_approved_restart_runs_once"))
    shim = folder / ".venv" / "bin" / "python"
    shim.parent.mkdir(parents=True, exist_ok=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "HOME": str(folder)}


def load_lines() -> tuple[tuple[str, str], str]:
    """The "Load it" block: the check line and what its comment promises, the serve line."""
    check_line, serve_line = block("sh", "-m bot check").strip().splitlines()
    return commented(check_line), commented(serve_line)[0]


def restarts(folder: Path) -> list[str]:
    log = folder / "restarts.log"
    return log.read_text().splitlines() if log.exists() else []


async def restart_web(
    client: ConsoleClient, folder: Path, cid: str, decision: str
) -> dict[str, Any]:
    """Type "restart web" in ``cid``, pick staging, answer the approval with ``decision``: the
    finished run. Nothing is restarted while the approval waits."""
    before = restarts(folder)
    await client.send(cid, "restart web")
    asked = await client.outstanding(cid, "ask_user")
    where = asked["payload"]["questions"][0]["question"]
    await client.answer_ok(asked["token"], {"answers": {where: "staging"}})
    approval = await client.outstanding(cid, "approval")
    assert approval["payload"]["arguments"] == {"service": "web", "environment": "staging"}
    assert restarts(folder) == before
    await client.answer_ok(approval["token"], {"decision": decision, "comment": ""})
    return await client.finished(cid)


@pytest.mark.e2e
async def test_the_pages_agent_restarts_only_what_a_person_approved(tmp_path: Path) -> None:
    """Served as the page says, twice: `check` names the agent, an approved restart runs once
    and says so, a rejected one runs nothing; the server's log stays clean."""
    folder = tmp_path / "reader"
    (check, promised), serve = load_lines()
    variable, _, command = serve.partition(" ")
    assert command == ".venv/bin/python -m bot", serve
    name, _, value = variable.partition("=")
    for attempt in (1, 2):
        env = paste(folder)
        checked = await asyncio.to_thread(bash, check, folder, env)
        assert checked.returncode == 0, checked.stderr
        assert re.sub(r"\s+", " ", promised) in re.sub(r"\s+", " ", checked.stdout)
        # The serve line's own command: this checkout's `python -m bot`, started in the folder.
        server = BotServer(tmp_path / f"server{attempt}", **{name: value}, **OPERATOR)
        server.cwd = folder
        try:
            await server.start()
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as http:
                client = ConsoleClient(http, server.url)
                approved = await restart_web(client, folder, f"approve{attempt}", "approve")
                assert approved["final_text"] == "Restarted web in staging.", approved
                assert len(restarts(folder)) == attempt
                assert restarts(folder)[-1].startswith("web staging ")
                rejected = await restart_web(client, folder, f"reject{attempt}", "reject")
                assert rejected["final_text"] == "Not restarted: reject.", rejected
                assert len(restarts(folder)) == attempt
            assert await server.terminate() == 0
            server.assert_log_clean()
            assert "agent my-agent)" in server.log_text()
        finally:
            server.close()


async def test_the_pages_load_errors_are_what_the_bridge_says(tmp_path: Path) -> None:
    """The page's two load errors, word for word: no such module, no such callable; exit 2."""
    lines = block("text", "configuration error: BOT_AGENT").strip().splitlines()
    (check, _), _ = load_lines()
    no_module, no_callable = lines
    env = paste(tmp_path)
    (tmp_path / AGENT_FILE).unlink()
    missing = await asyncio.to_thread(bash, check, tmp_path, env)
    assert (missing.returncode, missing.stderr.strip()) == (2, no_module)
    paste(tmp_path)
    misspelt = check.replace("my_agent:agent", "my_agent:agnet")
    wrong = await asyncio.to_thread(bash, misspelt, tmp_path, env)
    assert (wrong.returncode, wrong.stderr.strip()) == (2, no_callable)


async def test_the_pages_pytest_example_passes_as_pasted_twice(tmp_path: Path) -> None:
    """The page's test file, run with the page's command in the folder it says, passes both
    its tests, and again on a second run in the same folder."""
    command, promised = commented(block("sh", "-m pytest").strip())
    env = paste(tmp_path)
    for _ in (1, 2):
        done = await asyncio.to_thread(bash, command, tmp_path, env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert promised in done.stdout, done.stdout
