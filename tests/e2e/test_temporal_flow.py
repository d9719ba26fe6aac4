"""A Temporal workflow asks through a real bridge and waits durably: approve, twice, expire."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from temporalio.client import Client

from tests.adapters.temporal._temporal import (
    DevServer,
    WorkerProcess,
    deploys,
    dev_server,
    worker_env,
)
from tests.adapters.temporal._workflows import Deploy, DeployAsk
from tests.e2e._api import api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot, free_port

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def temporal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    yield from dev_server(tmp_path_factory.mktemp("temporal"))


@pytest.fixture
async def client(temporal: DevServer) -> AsyncIterator[Client]:
    yield await Client.connect(temporal.address)


@pytest.fixture
async def workers() -> AsyncIterator[list[WorkerProcess]]:
    """The workers a test starts; killed at its end, their log tails printed."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        await worker.close()
        print(f"--- {worker.log_path} ---\n{worker.log_tail()}")


async def test_a_workflow_asks_is_approved_in_the_console_and_completes(
    temporal: DevServer,
    client: Client,
    workers: list[WorkerProcess],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    tmp_path: Path,
) -> None:
    """The approval is asked once, approved in the console, and the workflow deploys once."""
    bot = await start_bot(**api_env("console:*"), **OPERATOR)
    port = free_port()
    queue = f"q-{uuid.uuid4()}"
    env = worker_env(
        temporal,
        bot.url,
        tmp_path,
        task_queue=queue,
        callback_url=f"http://127.0.0.1:{port}/temporal/webhook",
        receiver_port=port,
    )
    workers.append(await WorkerProcess(tmp_path / "worker", **env).start())
    handle = await client.start_workflow(
        Deploy.run,
        DeployAsk(conversation="tp-approve"),
        id=f"deploy-{uuid.uuid4()}",
        task_queue=queue,
    )
    console = ConsoleClient(http, bot.url)
    question = await console.outstanding("tp-approve", "approval")
    assert question["payload"]["arguments"] == {"service": "web", "version": "1.5"}
    await console.answer_ok(question["token"], APPROVE)
    assert await asyncio.wait_for(handle.result(), 60) == "approved: "
    assert deploys(tmp_path) == ["web 1.5"]
