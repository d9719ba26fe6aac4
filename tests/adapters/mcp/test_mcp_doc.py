"""docs/agents/mcp.md as pasted: its key command, its client config, and its Python example.

The Python example runs as written against the real app on a loopback port
(the bridge), with the key its first block makes: it starts a real
``python -m bot mcp`` over stdio, which asks on the console page. Only what
cannot be literal here is filled in: the bridge's URL, the key, and the
interpreter (this test's, for ``.venv/bin/python``).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.mcp.settings import McpSettings
from bot.app.settings import known_variables, unknown_variables
from tests.adapters.agent_docs import made_key, page_env, process
from tests.doors._doors import Door
from tests.e2e._client import APPROVE, ConsoleClient, approve_while_it_waits

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "agents" / "mcp.md"
TEXT = PAGE.read_text()
SH, HTTP_BRIDGE = re.findall(r"```sh\n(.*?)```", TEXT, re.S)
[PYTHON] = [b for b in re.findall(r"```python\n(.*?)```", TEXT, re.S) if "Stdio" in b]
[HTTP_PYTHON] = [
    b for b in re.findall(r"```python\n(.*?)```", TEXT, re.S) if "streamable_http" in b
]
PAGE_URL = "http://127.0.0.1:3978"
PAGE_KEY = "hitl_..."
PAGE_PYTHON = ".venv/bin/python"
# The example's route, the conversation the console shows its question in.
CONVERSATION = "ops"
INSTALL = [".venv/bin/pip install -e '.[mcp]'"]
# The bridge setting the page names for letting approvers edit.
[ALLOW_EDITS] = re.findall(r"`BOT_ALLOW=([^`]+)`", TEXT)


def _configs() -> list[tuple[str, dict[str, Any]]]:
    """Each page's JSON client config: (page, the hitl server's entry)."""
    found = []
    for page in (PAGE, ROOT / "docs" / "mcp.md"):
        for block in re.findall(r"```json\n(.*?)```", page.read_text(), re.S):
            found.append((page.name, json.loads(block)["mcpServers"]["hitl"]))
    return found


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    # No BOT_API_KEYS: the only key is the one the page's block puts in the store.
    async with Door(tmp_path) as served:
        yield served


def test_the_install_lines_name_this_checkouts_venv_and_extra() -> None:
    """Not run here (they would reinstall this venv): .venv is the Makefile's, mcp an extra."""
    lines = SH.strip().splitlines()
    assert lines[0].split("#")[0].strip() == "python3 -m venv .venv", lines
    assert lines[1:2] == INSTALL, lines
    makefile = (ROOT / "Makefile").read_text()
    assert "PYTHON ?= python3" in makefile and "VENV := .venv" in makefile
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("mcp") for r in extras["optional-dependencies"]["mcp"])


CONFIGS = _configs()


@pytest.mark.parametrize(("page", "server"), CONFIGS, ids=[page for page, _ in CONFIGS])
def test_the_client_config_starts_the_stdio_server_with_settings_the_bot_reads(
    page: str, server: dict[str, Any]
) -> None:
    """`python -m bot mcp` with BOT_MCP_* names the bot reads (no `is not a setting` line)."""
    assert server["command"].endswith(PAGE_PYTHON) and server["args"] == ["-m", "bot", "mcp"]
    env: dict[str, str] = server["env"]
    assert set(env) <= known_variables() and not unknown_variables(env), page
    settings = McpSettings.model_validate(env)
    assert settings.bridge_url and settings.route and settings.answerers


async def _key_from_the_page(door: Door, tmp_path: Path) -> str:
    """The block's api-key line, run from the checkout root against the door's store."""
    lines = [line for line in SH.strip().splitlines()[2:] if line.strip()]
    assert len(lines) == 1, lines
    key = await made_key(lines[0], page_env(tmp_path, door.db))
    assert key.startswith("hitl_"), key
    return key


def _example(url: str, key: str, **more_env: str) -> str:
    """The page's Python block with the URL, the key and the interpreter filled in."""
    code = PYTHON
    for literal, value in (
        (PAGE_URL, url),
        (PAGE_KEY, key),
        (f'"{PAGE_PYTHON}"', repr(sys.executable)),
    ):
        assert code.count(literal) == 1, literal
        code = code.replace(literal, value)
    for name, value in more_env.items():
        code = code.replace('"BOT_MCP_ROUTE"', f'"{name}": "{value}",\n        "BOT_MCP_ROUTE"')
    return code


async def _run_example(door: Door, tmp_path: Path, answer: dict[str, Any], **more_env: str) -> str:
    """Run the example, answer its approval on the console page; what it printed."""
    key = await _key_from_the_page(door, tmp_path)
    url = f"http://127.0.0.1:{door.port}"
    env = page_env(tmp_path, door.db)
    script = await process([sys.executable, "-c", _example(url, key, **more_env)], env)
    assert door.session is not None
    console = ConsoleClient(door.session, url)
    out, _ = await approve_while_it_waits(script, console, CONVERSATION, answer)
    return out


async def test_the_example_deploys_once_approved_on_the_console(door: Door, tmp_path: Path) -> None:
    """The pasted example, with the page's key, pauses on its approval; Approve prints what it
    deploys: the arguments it asked with."""
    assert await _run_example(door, tmp_path, APPROVE) == "deploying web 1.5\n"


async def test_an_edit_deploys_the_arguments_the_approver_gave(tmp_path: Path) -> None:
    """On a bridge whose BOT_ALLOW lets approvers edit (as the page says), the console's edit
    of the version comes back approved with the person's arguments, and the example deploys
    those."""
    async with Door(tmp_path, BOT_ALLOW=ALLOW_EDITS) as door:
        edit = {"decision": "edit", "arguments": {"service": "web", "version": "1.4"}}
        assert await _run_example(door, tmp_path, edit) == "deploying web 1.4\n"


async def test_the_example_waits_again_with_get_answer_and_reports_a_rejection(
    door: Door, tmp_path: Path
) -> None:
    """With no wait per call the first result is open, so the loop's get_answer runs; Reject
    prints the status and the comment."""
    reject = {"decision": "reject", "comment": "wrong window"}
    printed = await _run_example(door, tmp_path, reject, BOT_MCP_WAIT_SECONDS="0")
    assert printed == "not deploying: answered wrong window\n"


async def test_a_refused_call_ends_the_example_with_the_bridges_sentence(
    door: Door, tmp_path: Path
) -> None:
    """A key that may not ask on the console (the page's Slack route alone): the example prints
    the bridge's sentence, not a traceback, and nothing is asked."""
    key = await _key_from_the_page(door, tmp_path)
    made = await process(
        [sys.executable, "-m", "bot", "api-key", "create", "slack-only", "--route", "slack:C1"],
        page_env(tmp_path, door.db),
    )
    out, err = await asyncio.wait_for(made.communicate(), 60)
    assert made.returncode == 0, err.decode()
    slack_only = out.decode().strip()
    assert slack_only.startswith("hitl_") and slack_only != key
    url = f"http://127.0.0.1:{door.port}"
    script = await process(
        [sys.executable, "-c", _example(url, slack_only)], page_env(tmp_path, door.db)
    )
    out, err = await asyncio.wait_for(script.communicate(), 60)
    printed, said = out.decode(), err.decode()
    assert script.returncode == 0 and "Traceback" not in said, said
    assert printed.startswith("not deploying: refused "), printed
    assert "This API key may not post to console:ops; use a key whose routes" in printed
    assert door.session is not None
    feed = await ConsoleClient(door.session, url).feed(CONVERSATION)
    assert not [q for run in feed["runs"] for q in run["questions"]]


def _http_bridge_settings() -> dict[str, str]:
    """The settings the page starts the bridge with for /mcp (its `... make run` line)."""
    *assignments, command, target = HTTP_BRIDGE.split()
    assert (command, target) == ("make", "run"), HTTP_BRIDGE
    return dict(a.split("=", 1) for a in assignments)


async def test_the_http_example_sends_the_key_as_a_bearer_header_twice_in_a_row(
    tmp_path: Path,
) -> None:
    """The page's Streamable HTTP example, on a bridge started with the page's settings and
    the page's key: run twice in a row, Approve then Reject on the console, it prints each."""
    settings = _http_bridge_settings()
    assert not unknown_variables(settings)
    async with Door(tmp_path, **settings) as door:
        key = await _key_from_the_page(door, tmp_path)
        url = f"http://127.0.0.1:{door.port}"
        code = HTTP_PYTHON
        for literal, value in ((PAGE_URL, url), (PAGE_KEY, key)):
            assert code.count(literal) == 1, literal
            code = code.replace(literal, value)
        assert door.session is not None
        console = ConsoleClient(door.session, url)
        printed = []
        for answer in (APPROVE, {"decision": "reject", "comment": "wrong window"}):
            script = await process([sys.executable, "-c", code], page_env(tmp_path, door.db))
            out, _ = await approve_while_it_waits(script, console, CONVERSATION, answer)
            printed.append(out)
    assert printed == ["approved\n", "not approved: wrong window\n"]
