"""What reaches a real Temporal receiver from someone other than the workflow that asked:
another key's questions naming a victim workflow, and headers no bridge signs."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from adapters.temporal._wire import Origin
from tests import waiting
from tests.adapters.temporal._temporal import (
    HOOK,
    Deploying,
    DevServer,
    deploys,
    history_events,
    receiver_process,
)
from tests.adapters.temporal._workflows import DeployAsk
from tests.e2e._api import API_KEY, Api, approval
from tests.e2e._client import APPROVE
from tests.e2e._server import free_port
from tests.e2e.test_answer_links_process import answer_on_page
from tests.loopback import serving

pytestmark = pytest.mark.e2e

INTRUDER_KEY = "i" * 40
# The workflow's own key, and another that may only make answer links.
KEYS = [
    {"name": "ci", "key": API_KEY, "routes": ["console:*"]},
    {"name": "intruder", "key": INTRUDER_KEY, "routes": ["link:*"]},
]
ACCEPTED = "WORKFLOW_EXECUTION_UPDATE_ACCEPTED"


class Tap:
    """A webhook target that passes each delivery on to the receiver unchanged and keeps the
    receiver's first answer (status, body) to each ``webhook-id``."""

    def __init__(self, http: aiohttp.ClientSession, receiver: str) -> None:
        self._http = http
        self._receiver = receiver
        self._answers: dict[str, asyncio.Future[tuple[int, dict[str, Any]]]] = {}

    def answer(self, webhook_id: str) -> asyncio.Future[tuple[int, dict[str, Any]]]:
        return self._answers.setdefault(webhook_id, asyncio.get_running_loop().create_future())

    async def hook(self, request: web.Request) -> web.Response:
        body = await request.read()
        passed = {
            name: value
            for name, value in request.headers.items()
            if name.lower().startswith("webhook-") or name.lower() == "content-type"
        }
        async with self._http.post(self._receiver, data=body, headers=passed) as answered:
            status, said = answered.status, await answered.json()
        waiting_for = self.answer(request.headers["webhook-id"])
        if not waiting_for.done():
            waiting_for.set_result((status, said))
        return web.json_response(said, status=status)


@asynccontextmanager
async def tapping(http: aiohttp.ClientSession, receiver: str) -> AsyncIterator[tuple[Tap, str]]:
    """A tap in front of ``receiver`` while the block runs, and its URL."""
    tap = Tap(http, receiver)
    app = web.Application()
    app.router.add_post(HOOK, tap.hook)
    async with serving(app, free_port()) as url:
        yield tap, f"{url}{HOOK}"


async def intrude(
    http: aiohttp.ClientSession, api: Api, tap: Tap, callback_url: str, temporal: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    """As the link-only key: ask a question of its own whose metadata names ``temporal``, with
    the idempotency key ``temporal`` carries (or one of its own), answer it through its link,
    and wait for the receiver's answer to the close the bridge signs."""
    key = temporal.pop("idempotency_key", f"intrude-{uuid.uuid4()}")
    created = await api.created(
        approval(
            key,
            {"surface": "link", "conversation": "ops"},
            answerers=["link:me"],
            callback_url=callback_url,
            metadata={"temporal": temporal},
        )
    )
    assert await answer_on_page(http, created["links"]["me"], "approve") == 303
    return await asyncio.wait_for(tap.answer(f"msg_{created['id']}"), 60)


async def test_another_keys_closes_never_reach_a_victim_workflow(
    deploying: Deploying, http: aiohttp.ClientSession
) -> None:
    """A link-only key's answered questions naming a waiting workflow (its latest run, its run
    under another key, its run's own key at an asked and an unasked position) are refused by
    the receiver or the workflow; its history holds only its own close, and it deploys once."""
    port = free_port()
    bot, queue = await deploying.bridge_and_worker(
        push=True, outside_receiver=port, BOT_API_KEYS=json.dumps(KEYS)
    )
    async with receiver_process(deploying.temporal, deploying.folder, port) as receiver:
        handle, console, question = await deploying.asked(bot, queue, DeployAsk("tp-victim"))

        async def waits_on_its_timer() -> bool:
            return "TIMER_STARTED" in await history_events(deploying.client, handle.id)

        await waiting.eventually(waits_on_its_timer, what="the workflow waiting", seconds=60)
        run_id = handle.result_run_id
        assert run_id
        victim = {"namespace": deploying.client.namespace, "workflow_id": handle.id}

        def own_key(position: int) -> dict[str, Any]:
            origin = Origin(victim["namespace"], handle.id, run_id, position)
            return {**origin.as_metadata(), "idempotency_key": origin.idempotency_key}

        api = Api(http, bot.url, INTRUDER_KEY)
        async with tapping(http, f"{receiver.url}{HOOK}") as (tap, callback_url):
            latest = await intrude(
                http, api, tap, callback_url, {**victim, "run_id": "", "position": 0}
            )
            assert latest[0] == 400 and "run_id" in latest[1]["detail"], latest
            another_key = await intrude(
                http, api, tap, callback_url, {**victim, "run_id": run_id, "position": 0}
            )
            assert another_key[0] == 400 and "idempotency key" in another_key[1]["detail"]
            for position, says in ((0, "is not the one"), (1, "is not one")):
                copied = await intrude(http, api, tap, callback_url, own_key(position))
                assert copied[0] == 200 and copied[1]["result"] == "refused", copied
                assert f"{says} this workflow run asked" in copied[1]["detail"], copied
        events = await history_events(deploying.client, handle.id)
        assert ACCEPTED not in events, events
        await console.answer_ok(question["token"], APPROVE)
        assert await asyncio.wait_for(handle.result(), 60) == "approved: "
        assert await receiver.stop() == 0
    assert (await history_events(deploying.client, handle.id)).count(ACCEPTED) == 1
    assert deploys(deploying.folder) == ["web 1.5"]
    assert "Traceback" not in receiver.log_text()


@pytest.mark.parametrize("value", ["v1,é".encode(), b"v1,\xff", "v1,abc v1,ü=".encode()])
async def test_a_signature_header_that_is_not_ascii_is_a_400_from_the_receiver(
    temporal: DevServer, tmp_path: Path, value: bytes
) -> None:
    """UTF-8 or undecodable bytes in webhook-signature: 400 saying so, no traceback, and the
    receiver goes on serving."""
    port = free_port()
    async with receiver_process(temporal, tmp_path, port) as receiver:
        body = b'{"type": "question.answered"}'
        request = b"\r\n".join(
            [
                f"POST {HOOK} HTTP/1.1".encode(),
                f"Host: 127.0.0.1:{port}".encode(),
                b"Content-Type: application/json",
                b"webhook-id: msg_q_1",
                f"webhook-timestamp: {int(time.time())}".encode(),
                b"webhook-signature: " + value,
                f"Content-Length: {len(body)}".encode(),
                b"Connection: close",
                b"",
                body,
            ]
        )
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        await writer.drain()
        answer = await reader.read()
        writer.close()
        await writer.wait_closed()
        head, _, said = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), answer
        assert json.loads(said)["detail"] == "The webhook-signature header is not ASCII."
        async with aiohttp.ClientSession() as http, http.get(f"{receiver.url}/healthz") as alive:
            assert alive.status == 200
        assert await receiver.stop() == 0
    assert "Traceback" not in receiver.log_text()
