"""``bench/scale.py``'s server-process parts: ``/v1`` create and list through ``python -m bot``.

At each size the bench starts the bridge's own server on the store it grew
(the same SQLite file or PostgreSQL schema), with the key the ``/v1`` half
of the questions was asked under (``BOT_API_KEYS``; its id is the one
``bot.api`` derives from the key, so its list holds those questions), times
``POST /v1/questions`` and ``GET /v1/questions`` (the first page, the 20 it
shows by default) over loopback HTTP, reads the process's resident memory
(VmRSS from /proc) once they are done, and stops it. Only between the
in-process operations: the server's own sweeper would otherwise close the
questions the in-process sweep is timed closing.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.console import until_ready
from bot.api._keys import MAX_CREATES_PER_MINUTE, configured_key_id, hash_key
from tests.e2e._server import free_port, logged_process

API_KEY = "bench-scale-" + "k" * 40
KEY_ID = configured_key_id(hash_key(API_KEY))
_AUTH = {"Authorization": f"Bearer {API_KEY}"}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Served:
    """One server process on the bench's store, and its figures."""

    url: str
    pid: int
    tail: Callable[[], str]
    _created: int = 0

    async def create_ms(self, session: aiohttp.ClientSession) -> float:
        """One ``POST /v1/questions``: an approval to the console, as an agent asks it."""
        self._created += 1
        body = {
            "idempotency_key": f"scale-{time.time_ns()}-{self._created}",
            "kind": "approval",
            "payload": {"action": "deploy", "summary": "Deploy web to production?", "risk": "high"},
            "route": {"surface": "console", "conversation": "scale"},
            "answerers": ["anyone"],
        }
        began = time.perf_counter()
        async with session.post(f"{self.url}/v1/questions", json=body, headers=_AUTH) as response:
            await response.read()
        taken = (time.perf_counter() - began) * 1000
        if response.status != 201:
            raise SystemExit(f"POST /v1/questions answered {response.status}; log:\n{self.tail()}")
        return taken

    async def list_ms(self, session: aiohttp.ClientSession) -> float:
        """One ``GET /v1/questions``: the key's newest questions, the first page."""
        began = time.perf_counter()
        async with session.get(f"{self.url}/v1/questions", headers=_AUTH) as response:
            page = await response.json()
        taken = (time.perf_counter() - began) * 1000
        if response.status != 200 or not page.get("data"):
            raise SystemExit(f"GET /v1/questions answered {response.status}; log:\n{self.tail()}")
        return taken


async def figures(url: str, samples: int) -> dict[str, float]:
    """The server's p50s (ms) and its RSS (MiB) at the store's present size."""
    async with served(url) as server, aiohttp.ClientSession() as session:
        found: dict[str, float] = {}
        for name, call in (("/v1 create", server.create_ms), ("/v1 list page", server.list_ms)):
            await call(session)  # warm: the server's caches and prepared statements
            found[name] = statistics.median([await call(session) for _ in range(samples)])
        found["rss"] = rss_mib(server.pid)
        return found


def bot_env(port: int, database_url: str, data_dir: Path, api_key: str) -> dict[str, str]:
    """The environment a bench's ``python -m bot`` runs with: this one's, without any
    bridge setting, plus a port, a store, one API key for every route, and quiet JSON logs.
    The key names the most creates a minute a key may: its creates are the load being
    measured (the default, 60 a minute, refused the 61st)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "SLACK_", "TEAMS_"))}
    key = {
        "name": "bench",
        "key": api_key,
        "routes": ["*"],
        "creates_per_minute": MAX_CREATES_PER_MINUTE,
    }
    env.update(
        {
            "PORT": str(port),
            "BOT_HOST": "127.0.0.1",
            "DATABASE_URL": database_url,
            # A shared store wants the replicas' signing keys named (PostgreSQL).
            "BOT_SIGNING_KEYS": f"k1:{secrets.token_urlsafe(40)}",
            "BOT_DATA_DIR": str(data_dir),
            "BOT_LOG_LEVEL": "WARNING",
            "BOT_LOG_FORMAT": "json",
            "BOT_API_KEYS": json.dumps([key]),
            "LOGNAME": "Alice",
            "USER": "Alice",
        }
    )
    return env


@asynccontextmanager
async def served(database_url: str) -> AsyncIterator[Served]:
    """``python -m bot`` on ``database_url``, ready; stopped on exit."""
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        env = bot_env(port, database_url, Path(folder) / "var", API_KEY)
        log_path = Path(folder) / "bot.log"
        process = logged_process([sys.executable, "-m", "bot"], log_path, env=env, cwd=Path(folder))
        url = f"http://127.0.0.1:{port}"

        def tail() -> str:
            return "\n".join(log_path.read_text(errors="replace").splitlines()[-20:])[-3000:]

        try:
            async with aiohttp.ClientSession() as session:
                await until_ready(
                    session, f"{url}/healthz", exited=lambda: process.poll() is not None, tail=tail
                )
            yield Served(url, process.pid, tail)
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    await asyncio.to_thread(process.wait, 30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    await asyncio.to_thread(process.wait, 10)
