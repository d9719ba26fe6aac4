"""A real `python -m bot` process on loopback: start, SIGKILL, SIGTERM, restart.

Each server owns a folder holding its SQLite file, its data dir (where the
signing key is generated on first start) and its combined stdout/stderr
log. A restart reuses all three, so it is the same bot coming back: same
store, same key, same port.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests import waiting

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 30.0
# Variables the bot reads; the test's own environment must not leak into the child.
_BOT_PREFIXES = (
    "BOT_",
    "OPENAI_",
    "SLACK_",
    "DATABASE_URL",
    "PORT",
    "Microsoft",
    "TEAMS_",
    "TO_BOT_",
    "TO_CHANNEL_",
)


# Under pytest-xdist each worker (gw0, gw1, ...) takes its ports from a block of its own,
# below the kernel's ephemeral range (32768-60999), in turn: a port one worker picked and
# its server has not bound yet is never another worker's pick, nor an outgoing connection's.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_BLOCK_START, _BLOCK_SIZE = 20_000, 1_000
_next_in_block = itertools.count()


def free_port() -> int:
    """A loopback port nothing listens on right now: this worker's next free one under
    pytest-xdist, else the kernel's pick (bind 0, read it, close)."""
    if not _WORKER.startswith("gw"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    first = _BLOCK_START + int(_WORKER[2:]) * _BLOCK_SIZE
    for _ in range(_BLOCK_SIZE):
        port = first + next(_next_in_block) % _BLOCK_SIZE
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:  # in use (by anyone), or still closing
                continue
            return port
    raise RuntimeError(f"no free port in worker {_WORKER}'s block from {first}")


def logged_process(
    command: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = ROOT,
    append: bool = False,
    own_group: bool = False,
) -> subprocess.Popen[bytes]:
    """``command`` started with no stdin and its stdout and stderr both in ``log_path``: kept
    and added to with ``append`` (a restart's lines follow the earlier starts'); with
    ``own_group`` in a process group of its own, as a terminal or supervisor would signal it."""
    with log_path.open("ab" if append else "wb") as log:
        # The child keeps its own copy of the descriptor after we close ours.
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=own_group,
        )


def json_lines(log: str) -> list[dict[str, Any]]:
    """The log's JSON records, in order; a line that is not one JSON object is passed over."""
    records = []
    for line in log.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


class BotServer:
    """One bot process at a time in ``folder``; ``close`` always leaves none running."""

    def __init__(self, folder: Path, **env: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / "server.log"
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(_BOT_PREFIXES)}
        self.env = {
            **inherited,
            "PYTHONUNBUFFERED": "1",  # lines reach the log even when the process is killed
            "PORT": str(self.port),
            "BOT_HOST": "127.0.0.1",
            "DATABASE_URL": f"sqlite:///{folder / 'bot.sqlite3'}",
            "BOT_DATA_DIR": str(folder / "var"),
            "BOT_LOG_FORMAT": "json",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        # The folder the process starts in (a relative DATABASE_URL or BOT_DATA_DIR is read
        # from it).
        self.cwd = ROOT

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def start(self) -> BotServer:
        """Launch the process and wait until /healthz answers 200."""
        self._launch()
        await self.wait_ready()
        return self

    async def restart(self) -> BotServer:
        """Start again with the same environment, store, data dir and port."""
        if self.running:
            raise RuntimeError("restart() needs the previous process stopped first")
        return await self.start()

    def kill(self) -> int:
        """SIGKILL: no cleanup, no drain, exactly like a crash."""
        process = self._require_process()
        process.send_signal(signal.SIGKILL)
        return process.wait(timeout=10)

    async def terminate(self, *, within: float = 30.0) -> int:
        """SIGTERM, then wait at most ``within`` s for the exit code (TimeoutExpired if not)."""
        process = self._require_process()
        process.send_signal(signal.SIGTERM)
        return await asyncio.to_thread(process.wait, within)

    def close(self) -> None:
        """Kill the process if it still runs; safe to call any number of times."""
        if self.running:
            assert self.process is not None
            self.process.kill()
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def assert_log_clean(self) -> None:
        """Nothing went wrong on the server's side: no traceback, no ERROR line in its log."""
        log = self.log_text()
        assert "Traceback" not in log, self.log_tail()
        errors = [r for r in json_lines(log) if r.get("level") in {"error", "critical"}]
        assert not errors, errors

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_text().splitlines()[-lines:])

    async def wait_ready(self, *, seconds: float = READY_SECONDS) -> None:
        """Readiness wait: /healthz answers 200; fails at once if the process dies."""

        def alive() -> bool:
            process = self._require_process()
            if process.poll() is not None:
                raise RuntimeError(
                    f"bot exited with {process.returncode} before it was ready; "
                    f"log tail:\n{self.log_tail()}"
                )
            return True

        try:
            await waiting.healthy(self.url, alive=alive, seconds=seconds)
        except AssertionError as timed_out:
            raise RuntimeError(
                f"bot not ready on {self.url} after {seconds:.0f} s; log tail:\n{self.log_tail()}"
            ) from timed_out

    def _launch(self) -> None:
        if self.running:
            raise RuntimeError("the bot is already running")
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"--- start {self.starts} on port {self.port} ---\n".encode())
        command = [sys.executable, "-m", "bot"]
        self.process = logged_process(
            command, self.log_path, env=self.env, cwd=self.cwd, append=True
        )

    def _require_process(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            raise RuntimeError("the bot was never started")
        return self.process


# What the ``start_bot`` fixture gives a test: ``await start_bot(**env)`` -> a ready server.
StartBot = Callable[..., Awaitable[BotServer]]
