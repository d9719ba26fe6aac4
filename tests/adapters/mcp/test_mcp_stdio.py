"""``python -m bot mcp``: the tools over stdio, as a process an MCP client starts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.adapters.mcp._harness import DEPLOY, ROUTE, approval_answered
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.support import run_bot, run_text

ROOT = Path(__file__).resolve().parents[3]
REJECT = {"decision": "reject", "comment": "wrong window"}


def _env(**more: str) -> dict[str, str]:
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LOGNAME") if name in os.environ}
    return {**keep, "BOT_LOG_LEVEL": "WARNING", **more}


def _bot_mcp(door: Door, tmp_path: Path, **more: str) -> StdioServerParameters:
    """`python -m bot mcp` as an MCP client starts it, asking the door's bridge on ROUTE."""
    env = _env(
        BOT_MCP_BRIDGE_URL=f"http://127.0.0.1:{door.port}",
        BOT_MCP_API_KEY=API_KEY,
        BOT_MCP_ROUTE=ROUTE,
        **more,
    )
    # PYTHONPATH: the child imports bot from this checkout, wherever it runs.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "bot", "mcp"],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )


async def test_the_stdio_server_asks_the_bridge_and_returns_the_rejection(
    tmp_path: Path,
) -> None:
    """A real `python -m bot mcp` process: the call pauses; Reject comes back as a rejection."""
    async with Door(tmp_path, **api_env("console:*")) as door:
        async with Client(_bot_mcp(door, tmp_path, BOT_MCP_ANSWERERS="anyone")) as client:
            call = asyncio.create_task(client.call_tool("request_approval", DEPLOY))
            result = await approval_answered(door, call, REJECT)
        assert result["approved"] is False
        assert result["comment"] == "wrong window"


async def test_a_call_the_bridge_refuses_is_its_sentence_over_stdio(tmp_path: Path) -> None:
    """Six questions to ``python -m bot mcp``: is_error with the /v1 sentence."""
    async with Door(tmp_path, **api_env("console:*")) as door:
        six = [{"question": f"Question {n}?"} for n in range(6)]
        async with Client(_bot_mcp(door, tmp_path)) as client:
            result = await client.call_tool("ask_human", {"questions": six})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "questions: List should have at most 5 items" in text, text


def test_mcp_without_the_bridge_url_is_one_sentence(tmp_path: Path) -> None:
    """No BOT_MCP_BRIDGE_URL: exit 2 with one line naming the settings, no traceback."""
    done = run_bot("mcp", env=_env(PYTHONPATH=str(ROOT)), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "BOT_MCP_BRIDGE_URL" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_mcp_without_the_extra_installed_is_one_sentence(tmp_path: Path) -> None:
    """The SDK missing: exit 2 with one line saying to install the mcp extra."""
    probe = "import sys; sys.modules['mcp'] = None; from bot.__main__ import main; sys.exit(main())"
    done = run_text(
        [sys.executable, "-c", probe, "mcp"], env=_env(PYTHONPATH=str(ROOT)), cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "mcp extra" in lines[0], done.stderr


def test_check_says_whether_mcp_is_served(tmp_path: Path) -> None:
    """`check` prints the mcp line: off by default, on with its route."""
    base = _env(PYTHONPATH=str(ROOT), DATABASE_URL=f"sqlite:///{tmp_path / 'b.sqlite3'}")
    lines = {}
    for name, more in (("off", {}), ("on", {"BOT_MCP_HTTP": "true", "BOT_MCP_ROUTE": ROUTE})):
        done = subprocess.run(
            [sys.executable, "-m", "bot", "check"],
            capture_output=True,
            text=True,
            env=base | {"BOT_DATA_DIR": str(tmp_path / "var")} | more,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        lines[name] = next(line for line in done.stdout.splitlines() if line.startswith("mcp:"))
    assert lines["off"].startswith("mcp:      off")
    assert lines["on"] == f"mcp:      /mcp on, questions to {ROUTE}, a 45 s wait per call"
