"""A Temporal workflow waiting on the bridge survives a SIGKILL of its worker or of the bridge,
and completes once, by webhook and by long-poll."""

from __future__ import annotations

import asyncio

import pytest

from tests.adapters.temporal._temporal import (
    Deploying,
    another_worker,
    deploys,
    history_events,
    receiver_process,
)
from tests.adapters.temporal._workflows import DeployAsk
from tests.e2e._client import APPROVE
from tests.e2e._server import free_port

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("push", [True, False], ids=["webhook", "long-poll"])
async def test_the_worker_killed_while_the_workflow_waits_a_new_one_completes_it_once(
    deploying: Deploying, push: bool
) -> None:
    """SIGKILL the worker, start another, answer: one question, one deploy, one result."""
    bot, queue = await deploying.bridge_and_worker(push=push)
    handle, console, question = await deploying.asked(bot, queue, DeployAsk("tp-worker"))
    await deploying.workers[-1].kill()
    await another_worker(deploying.workers, deploying.folder)
    asked = await deploying.approved_once(bot, handle, console, question, seconds=90)
    assert len(asked) == 1, "the replayed workflow asked no second time"


async def test_the_bridge_killed_between_the_answer_and_the_webhook_delivers_it_after_restart(
    deploying: Deploying,
) -> None:
    """No receiver listens until the bridge is killed; its outbox sends the webhook on restart."""
    port = free_port()
    bot, queue = await deploying.bridge_and_worker(push=True, outside_receiver=port)
    handle, console, question = await deploying.asked(bot, queue, DeployAsk("tp-bridge"))
    await console.answer_ok(question["token"], APPROVE)
    bot.kill()  # the close is committed, the webhook owed and not delivered
    async with receiver_process(deploying.temporal, deploying.folder, port) as receiver:
        await bot.restart()
        assert await asyncio.wait_for(handle.result(), 90) == "approved: "
        assert await receiver.stop() == 0, receiver.log_text()
    events = await history_events(deploying.client, handle.id)
    assert events.count("WORKFLOW_EXECUTION_UPDATE_ACCEPTED") == 1, events
    assert deploys(deploying.folder) == ["web 1.5"]


async def test_the_bridge_killed_while_the_workflow_long_polls_it_answers_after_restart(
    deploying: Deploying,
) -> None:
    """The poll fails while the bridge is down and Temporal retries it until the answer."""
    bot, queue = await deploying.bridge_and_worker(push=False)
    handle, console, before = await deploying.asked(bot, queue, DeployAsk("tp-poll"))
    bot.kill()
    await bot.restart()
    after = await console.outstanding("tp-poll", "approval")
    assert after["token"] == before["token"], "still the one question"
    assert len(await deploying.approved_once(bot, handle, console, after, seconds=90)) == 1
