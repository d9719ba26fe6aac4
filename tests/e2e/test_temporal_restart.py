"""A Temporal workflow waiting on the bridge survives a SIGKILL of its worker or of the bridge,
and completes once, by webhook and by long-poll."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import aiohttp
import pytest
from temporalio.client import Client

from bot.client import Bridge
from tests import waiting
from tests.adapters.temporal._temporal import (
    HOOK,
    DevServer,
    WorkerProcess,
    another_worker,
    bridge_and_worker,
    client,
    deploys,
    history_events,
    start_deploy,
    temporal,
    worker_env,
    workers,
)
from tests.adapters.temporal._workflows import DeployAsk
from tests.e2e._api import API_KEY, WEBHOOK_SECRET, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import ROOT, StartBot, free_port

pytestmark = pytest.mark.e2e
__all__ = ["client", "temporal", "workers"]  # the fixtures, imported for pytest to find


@pytest.mark.parametrize("push", [True, False], ids=["webhook", "long-poll"])
async def test_the_worker_killed_while_the_workflow_waits_a_new_one_completes_it_once(
    temporal: DevServer,
    client: Client,
    workers: list[WorkerProcess],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    tmp_path: Path,
    push: bool,
) -> None:
    """SIGKILL the worker, start another, answer: one question, one deploy, one result."""
    bot, queue = await bridge_and_worker(start_bot, temporal, workers, tmp_path, push=push)
    handle = await start_deploy(client, queue, DeployAsk(conversation="tp-worker"))
    console = ConsoleClient(http, bot.url)
    question = await console.outstanding("tp-worker", "approval")
    await workers[-1].kill()
    await another_worker(workers, tmp_path)
    await console.answer_ok(question["token"], APPROVE)
    assert await asyncio.wait_for(handle.result(), 90) == "approved: "
    assert deploys(tmp_path) == ["web 1.5"]
    async with Bridge(bot.url, API_KEY) as bridge:
        assert len((await bridge.list()).data) == 1, "the replayed workflow asked no second time"


async def test_the_bridge_killed_between_the_answer_and_the_webhook_delivers_it_after_restart(
    temporal: DevServer,
    client: Client,
    workers: list[WorkerProcess],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    tmp_path: Path,
) -> None:
    """No receiver listens until the bridge is killed; its outbox sends the webhook on restart."""
    bot = await start_bot(**api_env("console:*"), **OPERATOR)
    queue = f"q-{uuid.uuid4()}"
    port = free_port()
    env = worker_env(
        temporal, bot.url, tmp_path, task_queue=queue, callback_url=f"http://127.0.0.1:{port}{HOOK}"
    )
    workers.append(await WorkerProcess(tmp_path / "worker", **env).start())
    handle = await start_deploy(client, queue, DeployAsk(conversation="tp-bridge"))
    console = ConsoleClient(http, bot.url)
    question = await console.outstanding("tp-bridge", "approval")
    await console.answer_ok(question["token"], APPROVE)
    bot.kill()  # the close is committed, the webhook owed and not delivered
    receiver = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "adapters.temporal.receiver",
        "--port",
        str(port),
        cwd=ROOT,
        env={
            **os.environ,
            "TEMPORAL_ADDRESS": temporal.address,
            "BOT_WEBHOOK_SECRET": WEBHOOK_SECRET,
        },
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await waiting.healthy(f"http://127.0.0.1:{port}", alive=lambda: receiver.returncode is None)
        await bot.restart()
        assert await asyncio.wait_for(handle.result(), 90) == "approved: "
    finally:
        receiver.terminate()
        _, err = await receiver.communicate()
        print(err.decode())
    assert receiver.returncode == 0, err.decode()
    events = await history_events(client, handle.id)
    assert events.count("WORKFLOW_EXECUTION_UPDATE_ACCEPTED") == 1, events
    assert deploys(tmp_path) == ["web 1.5"]


async def test_the_bridge_killed_while_the_workflow_long_polls_it_answers_after_restart(
    temporal: DevServer,
    client: Client,
    workers: list[WorkerProcess],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    tmp_path: Path,
) -> None:
    """The poll fails while the bridge is down and Temporal retries it until the answer."""
    bot, queue = await bridge_and_worker(start_bot, temporal, workers, tmp_path, push=False)
    handle = await start_deploy(client, queue, DeployAsk(conversation="tp-poll"))
    console = ConsoleClient(http, bot.url)
    before = await console.outstanding("tp-poll", "approval")
    bot.kill()
    await bot.restart()
    after = await console.outstanding("tp-poll", "approval")
    assert after["token"] == before["token"], "still the one question"
    await console.answer_ok(after["token"], APPROVE)
    assert await asyncio.wait_for(handle.result(), 90) == "approved: "
    assert deploys(tmp_path) == ["web 1.5"]
    async with Bridge(bot.url, API_KEY) as bridge:
        assert len((await bridge.list()).data) == 1
