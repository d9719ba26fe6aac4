"""Run a docs/agents page's examples: the offline one as pasted, the real-model one as
written but for its model and its last line."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.adapters.agent_bridge import DB, WEB, answer_about, bridge_on
from tests.doors._doors import Door
from tests.e2e._api import API_KEY
from tests.e2e._client import ConsoleClient, approve_while_it_waits
from tests.fakes.slack_api import buttons

__all__ = ["DB", "WEB"]  # the deploys the pages' examples ask about, for the page tests
ROOT = Path(__file__).resolve().parents[2]
# The user id the pages name as the one approver; the Slack clicks come from it.
APPROVER = "U012ABCDEF"
CHANNEL = "C0123456789"
PAGE_PYTHON = ".venv/bin/python"
# Where the offline examples ask: the console conversation the page says to pick.
CONVERSATION = "agents"


def blocks(page: str, language: str) -> list[str]:
    """The page's fenced blocks in ``language``, in order."""
    text = (ROOT / "docs" / "agents" / page).read_text()
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def example(page: str, containing: str) -> str:
    """The page's one python block that holds ``containing``."""
    [found] = [block for block in blocks(page, "python") if containing in block]
    return found


def load(page: str, model_line: str, model: Any) -> dict[str, Any]:
    """Exec the example with ``model_line`` bound to ``model`` and ``main`` left to await."""
    code = example(page, model_line)
    assert model_line in code and code.rstrip().endswith("asyncio.run(main())"), code
    code = code.replace(model_line, "MODEL = __model__").rstrip()
    code = code.removesuffix("asyncio.run(main())")
    namespace: dict[str, Any] = {"__model__": model, "__name__": "example"}
    exec(compile(code, page, "exec"), namespace)  # noqa: S102 - the page's own code, to test it
    return namespace


def posted_question(call: Any) -> bool:
    """A Slack message with buttons that the fake answered: a question as posted."""
    return bool(call.response and buttons(call.args))


async def die_then_decide(
    example: dict[str, Any], desk: Any, monkeypatch: pytest.MonkeyPatch, saved: str
) -> tuple[Path, list[Any]]:
    """The example's agent dies while it waits, runs again from its saved file ``saved``,
    and the approver approves WEB and rejects DB; the saved file and the questions asked."""
    monkeypatch.setenv("BRIDGE_URL", desk.url)
    monkeypatch.setenv("BRIDGE_API_KEY", API_KEY)
    first = asyncio.create_task(example["main"]())
    await desk.door.fake.wait_for("chat.postMessage", 2, where=posted_question)
    first.cancel()  # the agent's process dies while it waits
    with pytest.raises(asyncio.CancelledError):
        await first
    path: Path = example[saved]
    assert await asyncio.to_thread(path.exists)
    second = asyncio.create_task(example["main"]())
    await desk.decide(WEB, approve=True)
    await desk.decide(DB, approve=False, comment="not during the freeze")
    await asyncio.wait_for(second, 30)
    return path, list(await desk.questions(example["RUN_ID"]))


async def restarted_on_slack(
    example: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    saved: str,
) -> None:
    """The real-model example, asking on Slack, dies while it waits and runs again
    (``die_then_decide``): it prints its summary, deletes its saved file ``saved``, and
    asks one question per call, posted once each."""
    monkeypatch.chdir(tmp_path)
    async with bridge_on("slack", tmp_path, channel=CHANNEL, user=APPROVER) as desk:
        path, asked = await die_then_decide(example, desk, monkeypatch, saved)
    assert capsys.readouterr().out.strip() == "web is out; db was refused"
    assert not await asyncio.to_thread(path.exists)
    assert len(asked) == 2
    assert len([c for c in desk.door.fake.of("chat.postMessage") if posted_question(c)]) == 2


def install_line(page: str, extra: str) -> None:
    """The page's first shell line installs ``extra`` from the checkout (not run here: it
    would reinstall this venv), and the extra exists."""
    line = blocks(page, "sh")[0].strip().splitlines()[0]
    assert line == f".venv/bin/pip install -e '.[{extra}]'", line
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert extra in extras["optional-dependencies"]


async def run_offline(
    page: str,
    tmp_path: Path,
    answer: dict[str, Any],
    *,
    then: Sequence[tuple[dict[str, Any], dict[str, Any]]] = (),
) -> str:
    """The page's offline example as pasted, twice in a row against one real bridge with the
    key its api-key line made (a person trying another answer): each run with no OpenAI key
    in a process of its own, ``answer`` given on the console page (and each later question
    about the arguments in ``then`` its answer there); what it printed, the same both times.
    The api-key line, run again, makes a new key."""
    printed = []
    async with (
        Door(tmp_path) as door,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http,
    ):
        url = f"http://127.0.0.1:{door.port}"
        console = ConsoleClient(http, url)
        env = page_env(tmp_path, door.db, "OPENAI_")
        key = await page_key(page, env)
        for _ in range(2):
            env |= {"BRIDGE_URL": url, "BRIDGE_API_KEY": key}
            ran = await process([sys.executable, "-c", example(page, "offline")], env)
            later = asyncio.create_task(_answer_each(console, then))
            try:
                out, _ = await approve_while_it_waits(ran, console, CONVERSATION, answer)
            finally:
                if not later.done():
                    later.cancel()
            await later
            printed.append(out)
        assert await page_key(page, page_env(tmp_path, door.db, "OPENAI_")) != key
    first, again = printed
    assert again == first, printed
    return first


async def _answer_each(
    console: ConsoleClient, answers: Sequence[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    for arguments, answer in answers:
        await answer_about(console, CONVERSATION, arguments, answer)


def page_env(tmp_path: Path, db: Path, *dropped: str) -> dict[str, str]:
    """This process's environment without the bridge's settings (nor the variables starting
    with ``dropped``), its store ``db``: what a page's commands run with."""
    prefixes = ("BOT_", "DATABASE_URL", *dropped)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return env | {"DATABASE_URL": f"sqlite:///{db}", "BOT_DATA_DIR": str(tmp_path / "var")}


async def page_key(page: str, env: dict[str, str]) -> str:
    """The API key the page's first shell block makes with its ``api-key create`` line."""
    [key_line] = [line for line in blocks(page, "sh")[0].splitlines() if "api-key create" in line]
    return await made_key(key_line, env)


async def made_key(key_line: str, env: dict[str, str]) -> str:
    """What a page's ``api-key create`` line prints (the key), run from the checkout root with
    this interpreter in place of the page's."""
    assert key_line.startswith(f"{PAGE_PYTHON} -m bot api-key create"), key_line
    script = key_line.replace(PAGE_PYTHON, shlex.quote(sys.executable), 1)
    made = await process(["/bin/bash", "-c", script], env)
    out, err = await asyncio.wait_for(made.communicate(), 60)
    assert made.returncode == 0, err.decode()
    return out.decode().strip()


async def process(argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
    """``argv`` started from the checkout root with ``env``, its output piped to read."""
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
