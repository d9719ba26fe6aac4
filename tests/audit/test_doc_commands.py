"""The commands docs/audit.md and docs/admin.md show run as written, each exiting 0."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from bot.questions.records import QuestionStatus
from bot.stores import SqliteStores
from tests.adapters.console.console_support import Past, closed_question
from tests.audit.test_audit_cli import OLD_KEY, ROOT, TIMEOUT

PAGES = ("docs/audit.md", "docs/admin.md")


def commands(page: str) -> list[str]:
    """Each line of the page's ```sh blocks (indented ones too), in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = re.findall(r"^( *)```sh\n(.*?)^\1```", text, re.S | re.M)
    return [line.strip() for _, block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("page", PAGES)
async def test_each_command_on_the_page_runs(page: str, tmp_path: Path) -> None:
    """Against a store with closed questions and audited events: exit 0, nothing on stderr."""
    database = tmp_path / "bot.sqlite3"
    stores = await SqliteStores.open(database)
    try:
        await closed_question(
            stores, Past(1, QuestionStatus.ANSWERED, "slack", "alice", "slack:T1:U7", "reject")
        )
    finally:
        await stores.close()
    shown = commands(page)
    assert shown and all(line.startswith("python -m bot ") for line in shown), shown
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "BOT_SIGNING_KEYS": OLD_KEY,
        "DATABASE_URL": f"sqlite:///{database}",
    }
    for line in shown:
        # As pasted into a shell where ``python`` is the bot's interpreter.
        command = sys.executable + line.removeprefix("python")
        process = await asyncio.create_subprocess_shell(
            command,
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
        assert (process.returncode, err.decode()) == (0, ""), (line, out.decode())
