"""docs/agents/temporal.md's offline example, as pasted, against a real bridge and Temporal."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.adapters.agent_docs import (
    CONVERSATION,
    example,
    install_line,
    page_env,
    page_key,
    process,
)
from tests.adapters.temporal._temporal import DevServer, temporal
from tests.doors._doors import Door
from tests.e2e._client import ConsoleClient, approve_while_it_waits, exited_zero

PAGE = "temporal.md"
__all__ = ["temporal"]  # the fixture, imported for pytest to find
# temporalio's known crash at interpreter exit (sdk-python issue 300, open): a core
# thread takes the GIL while Python finalizes, after the script has done and printed
# everything. It ends the process with SIGABRT and this message; once in CI it ended it
# with nothing on stderr at all, which only a signal does (an exception would print), and
# the same race in other bindings segfaults silently. So a death by SIGABRT or SIGSEGV,
# saying nothing but the abort, is let through; what the script printed is checked all
# the same, so a crash before the result still fails.
_EXIT_ABORT = "Fatal Python error: PyGILState_Release"
_EXIT_SIGNALS = (-signal.SIGABRT, -signal.SIGSEGV)


def _exited_or_aborted_at_exit(returncode: int | None, stderr: str) -> bool:
    said_only_the_abort = stderr == "" or stderr.startswith(_EXIT_ABORT)
    at_exit = returncode in _EXIT_SIGNALS and said_only_the_abort
    return exited_zero(returncode, stderr) or at_exit


def test_the_page_installs_the_extra_from_the_checkout() -> None:
    """The install line is the checkout's, with the temporal extra."""
    install_line(PAGE, "temporal")


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
    async with Door(tmp_path) as door:
        env = page_env(tmp_path, door.db) | {"TEMPORAL_ADDRESS": temporal.address}
        key = await page_key(PAGE, env)
        url = f"http://127.0.0.1:{door.port}"
        env |= {"BRIDGE_URL": url, "BRIDGE_API_KEY": key}
        ran = await process([sys.executable, "-c", example(PAGE, "offline")], env)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            console = ConsoleClient(http, url)
            stdout, _ = await approve_while_it_waits(
                ran, console, CONVERSATION, answer, ended_well=_exited_or_aborted_at_exit
            )
    assert stdout.strip() == printed
