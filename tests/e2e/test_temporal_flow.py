"""A Temporal workflow asks through a real bridge and waits durably: approved, the webhook
twice, an answer before the wait, a workflow that ended, and an expiry on its own timer."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook
from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from adapters.temporal import BridgeActivities, Receipt, Receiver
from adapters.temporal._wire import ASK_ACTIVITY, AskRequest, AskResult, Origin
from bot.client import Bridge, Outcome
from tests.adapters.temporal._temporal import (
    HOOK,
    Deploying,
    DevServer,
    deploys,
    history_events,
    start_deploy,
)
from tests.adapters.temporal._workflows import Deploy, DeployAsk, Done, Renewed, record_deploy
from tests.e2e._api import API_KEY, WEBHOOK_SECRET, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot, free_port
from tests.loopback import serving

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("push", [True, False], ids=["webhook", "long-poll"])
async def test_a_workflow_asks_is_approved_in_the_console_and_completes(
    deploying: Deploying, push: bool
) -> None:
    """The approval is asked once, approved in the console, and the workflow deploys once."""
    bot, queue = await deploying.bridge_and_worker(push=push)
    handle, console, question = await deploying.asked(bot, queue, DeployAsk("tp-approve"))
    assert question["payload"]["arguments"] == {"service": "web", "version": "1.5"}
    [asked] = await deploying.approved_once(bot, handle, console, question, seconds=60)
    assert asked.metadata is not None
    assert asked.metadata["temporal"]["workflow_id"] == handle.id


async def test_a_workflow_that_continues_as_new_takes_each_runs_close_by_webhook(
    deploying: Deploying,
) -> None:
    """Each run asks under its own run id, and the receiver delivers each close to that run."""
    bot, queue = await deploying.bridge_and_worker(push=True)
    handle = await deploying.client.start_workflow(
        Renewed.run, args=[DeployAsk("tp-renew"), 2], id=f"renew-{uuid.uuid4()}", task_queue=queue
    )
    console = ConsoleClient(deploying.http, bot.url)
    for runs in (2, 1):
        question = await console.outstanding(f"tp-renew{runs}", "approval")
        await console.answer_ok(question["token"], APPROVE)
    assert await asyncio.wait_for(handle.result(), 60) == "approved in every run"
    async with Bridge(bot.url, API_KEY) as bridge:
        asked = (await bridge.list()).data
    run_ids = {q.metadata["temporal"]["run_id"] for q in asked if q.metadata is not None}
    last = await handle.describe()  # the handle names no run: the latest
    assert run_ids == {handle.result_run_id, last.run_id} and len(run_ids) == 2, run_ids
    events = await history_events(deploying.client, handle.id)  # the last run's
    assert events.count("WORKFLOW_EXECUTION_UPDATE_ACCEPTED") == 1, events


@asynccontextmanager
async def receiving_twice(client: Client, port: int) -> AsyncIterator[list[Receipt]]:
    """A webhook target that hands each delivery to the receiver twice, as a bridge that
    retried after a lost answer would; every receipt, in order."""
    receiver = Receiver(client, secret=WEBHOOK_SECRET)
    receipts: list[Receipt] = []

    async def hook(request: web.Request) -> web.Response:
        body = await request.read()
        for _ in range(2):
            receipts.append(await receiver.deliver(request.headers, body))
        return web.json_response(receipts[0].body(), status=receipts[0].status)

    app = web.Application()
    app.router.add_post(HOOK, hook)
    async with serving(app, port):
        yield receipts


async def test_a_webhook_delivered_twice_is_one_answer_to_the_workflow(
    deploying: Deploying,
) -> None:
    """Both deliveries are acknowledged; the workflow's history holds one update, one deploy."""
    port = free_port()
    bot, queue = await deploying.bridge_and_worker(push=True, outside_receiver=port)
    async with receiving_twice(deploying.client, port) as receipts:
        handle, console, question = await deploying.asked(bot, queue, DeployAsk("tp-twice"))
        await console.answer_ok(question["token"], APPROVE)
        assert await asyncio.wait_for(handle.result(), 60) == "approved: "
    assert [(r.status, r.result) for r in receipts][:1] == [(200, "accepted")]
    assert len(receipts) == 2 and receipts[1].status == 200, receipts
    events = await history_events(deploying.client, handle.id)
    assert events.count("WORKFLOW_EXECUTION_UPDATE_ACCEPTED") == 1, events
    assert deploys(deploying.folder) == ["web 1.5"]


async def test_an_answer_that_arrives_before_the_workflow_waits_is_used_at_once(
    temporal: DevServer,
    client: Client,
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The close reaches the workflow while the ask activity still runs; no timer is started."""
    bot = await start_bot(**api_env("console:*"), **OPERATOR)
    monkeypatch.setenv("DEPLOY_LOG", str(tmp_path / "deploys.log"))
    port = free_port()
    console = ConsoleClient(http, bot.url)
    receiver = Receiver(client, secret=WEBHOOK_SECRET)
    delivered = asyncio.Event()

    async def hook(request: web.Request) -> web.Response:
        receipt = await receiver.deliver(request.headers, await request.read())
        if receipt.result == "accepted":
            delivered.set()
        return web.json_response(receipt.body(), status=receipt.status)

    app = web.Application()
    app.router.add_post(HOOK, hook)
    async with serving(app, port) as target, Bridge(bot.url, API_KEY) as bridge:
        real = BridgeActivities(bridge, callback_url=f"{target}{HOOK}")

        @activity.defn(name=ASK_ACTIVITY)
        async def ask_and_answer_first(request: AskRequest) -> AskResult:
            asked = await real.ask(request)
            question = await console.outstanding("tp-early", "approval")
            await console.answer_ok(question["token"], APPROVE)
            await delivered.wait()  # the workflow holds the close before it knows the question
            return asked

        queue = f"q-{uuid.uuid4()}"
        async with Worker(
            client,
            task_queue=queue,
            workflows=[Deploy],
            activities=[ask_and_answer_first, real.wait_closed, record_deploy],
            workflow_failure_exception_types=[Outcome],
        ):
            handle = await start_deploy(client, queue, DeployAsk(conversation="tp-early"))
            assert await asyncio.wait_for(handle.result(), 60) == "approved: "
    events = await history_events(client, handle.id)
    accepted = events.index("WORKFLOW_EXECUTION_UPDATE_ACCEPTED")
    assert accepted < events.index("ACTIVITY_TASK_COMPLETED"), events
    assert "TIMER_STARTED" not in events, "the workflow never waited"


def signed(
    event: dict[str, Any], *, webhook_id: str, secret: str = WEBHOOK_SECRET
) -> tuple[dict[str, str], bytes]:
    """Headers and body as the bridge signs a webhook (Standard Webhooks)."""
    body = json.dumps(event).encode()
    stamp = int(time.time())
    signature = Webhook(secret).sign(webhook_id, datetime.fromtimestamp(stamp, UTC), body.decode())
    headers = {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": signature,
    }
    return headers, body


def closed_event(metadata: dict[str, Any] | None, idempotency_key: str = "k") -> dict[str, Any]:
    """A ``question.answered`` event as the bridge sends it, with ``metadata``."""
    stamp = "2026-01-01T00:00:00Z"
    return {
        "type": "question.answered",
        "timestamp": stamp,
        "data": {
            "id": "q_late",
            "kind": "approval",
            "status": "answered",
            "payload": {},
            "route": {"surface": "console", "conversation": "late"},
            "answerers": ["anyone"],
            "created_at": stamp,
            "expires_at": stamp,
            "closed_at": stamp,
            "answer": APPROVE,
            "delivery": {"status": "posted"},
            "metadata": metadata,
            "idempotency_key": idempotency_key,
        },
    }


async def test_the_receiver_acknowledges_what_a_retry_cannot_change(
    temporal: DevServer, client: Client
) -> None:
    """An ended workflow and a question of no workflow are 200s; a forgery is a 400."""
    queue = f"q-{uuid.uuid4()}"
    async with Worker(client, task_queue=queue, workflows=[Done]):
        handle = await client.start_workflow(Done.run, id=f"done-{uuid.uuid4()}", task_queue=queue)
        assert await handle.result() == "done"
    receiver = Receiver(client, secret=WEBHOOK_SECRET)
    assert handle.result_run_id is not None
    asked = Origin(client.namespace, handle.id, handle.result_run_id, 0)
    origin = asked.as_metadata()
    ended = await receiver.deliver(
        *signed(closed_event({"temporal": origin}, asked.idempotency_key), webhook_id="msg_q_late")
    )
    assert (ended.status, ended.result) == (200, "ended"), ended
    foreign = await receiver.deliver(*signed(closed_event({"team": "ops"}), webhook_id="msg_q_x"))
    assert (foreign.status, foreign.result) == (200, "ignored"), foreign
    other = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="
    forged = await receiver.deliver(
        *signed(closed_event({"temporal": origin}), webhook_id="msg_q_late", secret=other)
    )
    assert (forged.status, forged.result) == (400, "invalid"), forged


async def test_an_unanswered_question_expires_on_the_workflows_own_timer(
    deploying: Deploying,
) -> None:
    """With the bridge gone after the ask, the workflow still sees Expired, from its timer."""
    bot, queue = await deploying.bridge_and_worker(push=True)
    handle, _, _ = await deploying.asked(bot, queue, DeployAsk("tp-expire", ttl_seconds=60))
    bot.kill()
    assert await asyncio.wait_for(handle.result(), 120) == "expired"
    events = await history_events(deploying.client, handle.id)
    assert "TIMER_FIRED" in events and "WORKFLOW_EXECUTION_UPDATE_ACCEPTED" not in events
    assert deploys(deploying.folder) == []
