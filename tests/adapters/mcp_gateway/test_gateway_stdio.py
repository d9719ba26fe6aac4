"""``python -m bot mcp-gateway``: the gateway as a process an MCP client starts, killed and
started again while its question is open."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.adapters.mcp_gateway._rig import (
    CONVERSATION,
    ROUTE,
    deploys,
    gateway_toml,
    text_of,
)
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient
from tests.support import run_bot

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = {"service": "web", "version": "1.5"}
RULE = '[[rules]]\ntools = "ops__deploy"\naction = "approve"\n'


def _env(folder: Path, **more: str) -> dict[str, str]:
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LOGNAME") if name in os.environ}
    return {
        **keep,
        "BOT_LOG_LEVEL": "WARNING",
        "BOT_DATA_DIR": str(folder / "gateway-var"),
        "PYTHONPATH": str(ROOT),
        **more,
    }


def _gateway(door: Door, folder: Path, pid_file: Path) -> StdioServerParameters:
    """The gateway started through a shell that writes its pid, then execs it (same pid)."""
    env = _env(
        folder,
        BOT_MCP_GATEWAY=str(gateway_toml(folder, RULE)),
        BOT_MCP_BRIDGE_URL=f"http://127.0.0.1:{door.port}",
        BOT_MCP_API_KEY=API_KEY,
        BOT_MCP_ROUTE=ROUTE,
        BOT_MCP_ANSWERERS="anyone",
    )
    script = f'echo $$ > "{pid_file}"; exec "{sys.executable}" -m bot mcp-gateway'
    return StdioServerParameters(command="/bin/sh", args=["-c", script], env=env, cwd=folder)


async def test_a_gateway_killed_while_its_question_is_open_keeps_it_and_runs_the_call_once(
    tmp_path: Path,
) -> None:
    """SIGKILL with the approval open; approved meanwhile; the restarted gateway's identical
    call picks up that answer and runs the call exactly once."""
    pid_file = tmp_path / "gateway.pid"
    async with Door(tmp_path, **api_env("console:*")) as door:
        console = ConsoleClient(door.session, f"http://127.0.0.1:{door.port}")  # type: ignore[arg-type]
        with contextlib.suppress(Exception):
            async with Client(_gateway(door, tmp_path, pid_file)) as first:
                call = asyncio.create_task(first.call_tool("ops__deploy", DEPLOY))
                asked = await console.outstanding(CONVERSATION, "approval")
                os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
                with contextlib.suppress(Exception):
                    await call
        await console.answer_ok(asked["token"], {"decision": "approve"})
        assert deploys(tmp_path) == []
        async with Client(_gateway(door, tmp_path, pid_file)) as second:
            result = await second.call_tool("ops__deploy", DEPLOY)
    assert not result.is_error, text_of(result)
    assert text_of(result) == "deployed web 1.5"
    assert deploys(tmp_path) == ["deploy web 1.5"]


def test_a_gateway_file_that_does_not_parse_is_one_sentence_naming_the_line(
    tmp_path: Path,
) -> None:
    """A broken TOML file: exit 2, one line naming the setting and the line, no traceback."""
    broken = tmp_path / "gateway.toml"
    broken.write_text('[gateway]\nwait_seconds = 50\n[[upstreams]\nname = "ops"\n')
    done = run_bot("mcp-gateway", env=_env(tmp_path, BOT_MCP_GATEWAY=str(broken)), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "BOT_MCP_GATEWAY" in lines[0] and "line 3" in lines[0], lines
    assert "Traceback" not in done.stderr


def test_an_unknown_field_is_refused_naming_it(tmp_path: Path) -> None:
    """A misspelt field: exit 2, one line naming it."""
    file = tmp_path / "gateway.toml"
    file.write_text(
        '[[upstreams]]\nname = "ops"\ncommand = ["x"]\n\n[[rules]]\ntools = "*"\nacton = "allow"\n'
    )
    done = run_bot("mcp-gateway", env=_env(tmp_path, BOT_MCP_GATEWAY=str(file)), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "rules.0.acton" in done.stderr and "Traceback" not in done.stderr, done.stderr
