"""docs/agents/temporal.md's offline example, as pasted, against a real bridge and Temporal."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.adapters.agent_docs import CONVERSATION, PAGE_PYTHON, ROOT, blocks, example, install_line
from tests.adapters.temporal._temporal import DevServer, temporal
from tests.doors._doors import Door
from tests.e2e._client import ConsoleClient

PAGE = "temporal.md"
__all__ = ["temporal"]  # the fixture, imported for pytest to find
# temporalio's known abort at interpreter exit (sdk-python issue 300, open): a core
# thread takes the GIL while Python finalizes, after the script has done and printed
# everything. Only this abort, at exit, is let through.
_EXIT_ABORT = "Fatal Python error: PyGILState_Release"


def test_the_page_installs_the_extra_from_the_checkout() -> None:
    """The install line is the checkout's, with the temporal extra."""
    install_line(PAGE, "temporal")


async def _run(argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


@pytest.mark.parametrize(
    ("answer", "printed"),
    [
        ({"decision": "approve", "comment": ""}, "deployed web 1.5"),
        ({"decision": "reject", "comment": "not today"}, "not deployed: not today"),
    ],
)
async def test_the_offline_example_runs_as_pasted(
    temporal: DevServer, tmp_path: Path, answer: dict[str, str], printed: str
) -> None:
    """The workflow asks in the console's `agents`; the answer decides what it prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "DATABASE_URL"))}
    env["TEMPORAL_ADDRESS"] = temporal.address
    async with Door(tmp_path) as door:
        env |= {"DATABASE_URL": f"sqlite:///{door.db}", "BOT_DATA_DIR": str(tmp_path / "var")}
        [key_line] = [line for line in blocks(PAGE, "sh")[0].splitlines() if "api-key" in line]
        script = key_line.replace(PAGE_PYTHON, shlex.quote(sys.executable), 1)
        made = await _run(["/bin/bash", "-c", script], env)
        out, err = await asyncio.wait_for(made.communicate(), 60)
        assert made.returncode == 0, err.decode()
        url = f"http://127.0.0.1:{door.port}"
        env |= {"BRIDGE_URL": url, "BRIDGE_API_KEY": out.decode().strip()}
        ran = await _run([sys.executable, "-c", example(PAGE, "offline")], env)
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
                console = ConsoleClient(http, url)
                question = await console.outstanding(CONVERSATION, "approval")
                assert question["payload"]["arguments"] == {"service": "web", "version": "1.5"}
                await console.answer_ok(question["token"], answer)
            stdout, stderr = await asyncio.wait_for(ran.communicate(), 60)
        finally:
            if ran.returncode is None:
                ran.kill()
                await ran.wait()
    said = stderr.decode()
    at_exit = ran.returncode == -signal.SIGABRT and said.startswith(_EXIT_ABORT)
    assert ran.returncode == 0 or at_exit, said
    assert stdout.decode().strip() == printed
