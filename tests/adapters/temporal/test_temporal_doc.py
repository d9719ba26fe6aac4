"""docs/agents/temporal.md's offline example, as pasted, against a real bridge and Temporal."""

from __future__ import annotations

import sys
from pathlib import Path

import aiohttp

from tests.adapters.agent_docs import (
    CONVERSATION,
    example,
    install_line,
    page_env,
    page_key,
    process,
)
from tests.adapters.temporal._temporal import DevServer, temporal, temporal_cli
from tests.doors._doors import Door
from tests.e2e._client import ConsoleClient, approve_while_it_waits
from tests.e2e._server import ROOT
from tests.support import run_text

PAGE = "temporal.md"
__all__ = ["temporal"]  # the fixture, imported for pytest to find
RUNS = 10
# What the example prints for each answer on the console page, taken in turn.
ANSWERS = [
    ({"decision": "approve", "comment": ""}, "deployed web 1.5"),
    ({"decision": "reject", "comment": "not today"}, "not deployed: not today"),
]


def test_the_page_installs_the_extra_from_the_checkout() -> None:
    """The install line is the checkout's, with the temporal extra."""
    install_line(PAGE, "temporal")


def test_the_page_starts_the_dev_server_with_the_cli_in_the_venv() -> None:
    """The page's `temporal server start-dev` names the CLI where the venv has it (the one
    the tests' dev server runs), not a `temporal` on PATH."""
    text = (ROOT / "docs" / "agents" / PAGE).read_text()
    assert "`.venv/bin/temporal server start-dev`" in text
    assert "`temporal server start-dev`" not in text
    assert temporal_cli() == str(Path(sys.executable).parent / "temporal")


def test_the_receiver_command_starts_without_a_runpy_warning(tmp_path: Path) -> None:
    """`python -m adapters.temporal.receiver` without its secret says only what to set (no
    runpy RuntimeWarning about the package having imported it)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = run_text([sys.executable, "-m", "adapters.temporal.receiver"], env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("Set BOT_WEBHOOK_SECRET to the bridge's webhook secret (whsec_...).\n")


async def test_the_offline_example_runs_as_pasted_and_exits_cleanly_every_time(
    temporal: DevServer, tmp_path: Path
) -> None:
    """The workflow asks in the console's `agents`; the answer decides what it prints. Run
    ten times in a row against one bridge and one Temporal, approved and rejected in turn,
    it exits 0 with nothing on stderr each time (temporalio's abort at exit never shows)."""
    async with (
        Door(tmp_path) as door,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http,
    ):
        env = page_env(tmp_path, door.db) | {"TEMPORAL_ADDRESS": temporal.address}
        key = await page_key(PAGE, env)
        url = f"http://127.0.0.1:{door.port}"
        env |= {"BRIDGE_URL": url, "BRIDGE_API_KEY": key}
        console = ConsoleClient(http, url)
        for run in range(RUNS):
            answer, printed = ANSWERS[run % len(ANSWERS)]
            ran = await process([sys.executable, "-c", example(PAGE, "offline")], env)
            stdout, stderr = await approve_while_it_waits(ran, console, CONVERSATION, answer)
            assert (run, stdout.strip(), stderr) == (run, printed, "")
