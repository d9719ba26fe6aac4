"""The set-up pages' shell blocks (``docs/slack.md``, ``docs/replicas.md``), run as written
in a clean folder.

Only what cannot exist here is filled in: a placeholder becomes a value that
works on this machine (the local PostgreSQL, the loopback Slack Web API), and
``.venv/bin/python`` is this checkout's interpreter. The Teams steps are run
the same way in ``tests/test_cli.py``; email's in ``tests/adapters/email/test_email_readme.py``;
the container in ``tests/e2e/test_container.py``.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from bot.stores.settings import StoreSettings
from tests.e2e._server import free_port
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.stores._postgres import fresh_schema
from tests.support import run_text
from tests.waiting import healthy

ROOT = Path(__file__).resolve().parents[1]


def page_block(page: str, after: str) -> list[str]:
    """The lines of the first ```sh block after ``after`` on ``page`` (from the root)."""
    text = (ROOT / page).read_text()
    rest = text[text.index(after) :]
    match = re.search(r"```sh\n(.*?)```", rest, re.S)
    assert match is not None
    return [line.strip() for line in match.group(1).splitlines()]


def checkout_folder(tmp_path: Path) -> dict[str, str]:
    """A folder where ``.venv/bin/python -m bot`` is this checkout's bot; its environment."""
    shim = tmp_path / ".venv" / "bin" / "python"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_text(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env)


def commented(line: str) -> tuple[str, str]:
    """A line as its command and the output its comment promises."""
    command, _, comment = line.partition("#")
    quoted = re.search(r'"(.*)"', comment)
    return command.strip(), (quoted.group(1) if quoted else comment).strip()


async def test_the_slack_steps_check_the_tokens_with_slack(tmp_path: Path) -> None:
    """Step 4: the .env heredoc, then `make check` says what its comment says."""
    lines = page_block("docs/slack.md", "4. Put them in `.env` and start:")
    heredoc_end = lines.index("ENV", 1)
    assert lines[0] == "cat >> .env <<'ENV'"
    values = {"xoxb-...": BOT_TOKEN, "xapp-...": APP_TOKEN, "...": "a-signing-secret"}
    pairs = (line.split("=", 1) for line in lines[1:heredoc_end])
    env_lines = [f"{name}={values[value]}" for name, value in pairs]
    check, promised = commented(lines[heredoc_end + 1])
    assert check == "make check" and lines[heredoc_end + 2] == "make run"
    # `make check` is this command (Makefile), from the folder with the .env.
    assert "$(BIN)/python -m bot check" in (ROOT / "Makefile").read_text()
    env = checkout_folder(tmp_path)
    slack = await FakeSlack().start()
    try:
        script = "cat >> .env <<'ENV'\n" + "\n".join(env_lines) + "\nENV\n"
        script += ".venv/bin/python -m bot check\n"
        done = await asyncio.to_thread(
            bash, script, tmp_path, {**env, "SLACK_API_URL": slack.api_url}
        )
    finally:
        await slack.close()
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    before, _, after = promised.partition("(...)")
    slack_line = next(ln for ln in done.stdout.splitlines() if ln.startswith("slack:"))
    said = re.sub(r"\s+", " ", slack_line)
    assert said.startswith(before) and said.endswith(after), (promised, said)
    assert {c.method for c in slack.calls} == {"auth.test", "apps.connections.open"}


async def test_the_postgresql_steps_run_as_written(tmp_path: Path) -> None:
    """Several replicas: the exports, `check` saying what its comment says, then the server."""
    lines = page_block("docs/replicas.md", "# Several replicas (PostgreSQL)")
    url_line, keys_line, check_line, serve_line = lines
    assert url_line.startswith("export DATABASE_URL=postgresql://")
    assert keys_line.startswith('export BOT_SIGNING_KEYS="$(.venv/bin/python -m bot keygen)"')
    check, promised = commented(check_line)
    assert serve_line == ".venv/bin/python -m bot"
    env = checkout_folder(tmp_path)
    async with fresh_schema() as database_url:
        # The one substitution: the reader's database is this machine's, in a fresh schema.
        ours = f"export DATABASE_URL='{database_url}'"
        keys = commented(keys_line)[0]
        done = await asyncio.to_thread(bash, f"{ours}\n{keys}\n{check}\n", tmp_path, env)
        assert done.returncode == 0, done.stderr
        # The promised store is the page's database; this one is where it is here.
        here = StoreSettings(DATABASE_URL=database_url).location
        promised = promised.replace("PostgreSQL db.internal:5432/bot", here)
        assert promised in done.stdout, (promised, done.stdout)
        # Without the keys the same check refuses: one line, exit 2.
        keyless = await asyncio.to_thread(bash, f"{ours}\n{check}\n", tmp_path, env)
        assert keyless.returncode == 2 and "BOT_SIGNING_KEYS" in keyless.stderr
        assert keyless.stderr.count("\n") == 1

        port = free_port()
        script = f"{ours}\n{keys}\nexec {serve_line}\n"
        server = await asyncio.create_subprocess_exec(
            "bash",
            "-euo",
            "pipefail",
            "-c",
            script,
            cwd=tmp_path,
            env={**env, "PORT": str(port)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            await healthy(f"http://127.0.0.1:{port}", alive=lambda: server.returncode is None)
        finally:
            server.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(server.communicate(), timeout=60)
        stderr = err.decode()
        assert server.returncode == 0, stderr
        assert "Traceback" not in stderr
