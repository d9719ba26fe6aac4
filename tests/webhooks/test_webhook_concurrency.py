"""Webhooks are sent beside chat posts, never ahead of them: a dead receiver delays its own lane."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._surface import SlackSurface
from bot.api import API_QUESTIONS, ApiQuestions, ApiSettings, serve_api
from bot.contract.models import CREATE_QUESTION
from bot.questions.records import ApiKey
from bot.stores.ports import Stores
from bot.testing import FixedClock, RecordingSurface, Scheduled
from bot.webhooks import WebhookSettings
from tests.fakes.slack_api import BOT_TOKEN, TEAM, FakeSlack
from tests.support import Harness, HarnessFactory

KEY = ApiKey("ci", "", ("*",), key_id="key_ci")
RECEIVERS = 20
# The sender's own timeout (the ``settings`` fixture's) ends each attempt to a dead receiver;
# nothing here waits for it: the tests check what happened before the first one ended.


@dataclass
class Hanging:
    """A loopback receiver that accepts each request and answers only once released."""

    port: int = 0
    status: int = 200
    received: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.received += 1
        self.arrived.set()
        await self.release.wait()
        return web.Response(status=self.status)


@asynccontextmanager
async def receivers(count: int) -> AsyncIterator[list[Hanging]]:
    async with AsyncExitStack() as stack:
        found: list[Hanging] = []
        for _ in range(count):
            receiver = Hanging()
            app = web.Application()
            app.router.add_post("/hooks", receiver.handle)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=0)
            await runner.setup()
            stack.push_async_callback(runner.cleanup)
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            server = site._server
            assert isinstance(server, asyncio.Server)
            receiver.port = server.sockets[0].getsockname()[1]
            stack.callback(receiver.release.set)  # let them answer before their servers stop
            found.append(receiver)
        yield found


class Seen(logging.Handler):
    """Calls ``saw`` with each failed webhook attempt the deliverer logs, as it logs it."""

    def __init__(self, saw: Callable[[], None]) -> None:
        super().__init__()
        self._saw = saw

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("delivery of webhook"):
            self._saw()


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    slack = await FakeSlack().start()
    yield slack
    await slack.close()


@asynccontextmanager
async def questions_api(
    h: Harness, settings: WebhookSettings, hanging: list[Hanging], seen: Seen
) -> AsyncIterator[ApiQuestions]:
    """The agents API's questions on ``h``'s service; at the end ``seen`` stops listening,
    the hanging receivers are let go, and the service is idle before the API stops."""
    app = web.Application()
    stop = serve_api(app, ApiSettings(), settings, service=h.service)
    try:
        yield app[API_QUESTIONS]
    finally:
        logging.getLogger("bot.service.delivering.delivery").removeHandler(seen)
        for receiver in hanging:
            receiver.release.set()
        await h.service.wait_idle()
        await stop()


def approval(key: str, route: dict[str, str], callback_url: str | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "idempotency_key": key,
        "kind": "approval",
        "payload": {"action": "deploy", "summary": "Deploy web to production"},
        "route": route,
        "answerers": ["anyone"],
    }
    if callback_url is not None:
        raw["callback_url"] = callback_url
    return raw


async def test_a_slack_post_goes_out_before_any_webhook_to_a_dead_receiver_times_out(
    harness: HarnessFactory, stores: Stores, settings: WebhookSettings, fake: FakeSlack
) -> None:
    """With 20 webhooks stuck on dead receivers, a Slack question is posted before any times out."""
    h = harness(stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    # How many Slack posts had arrived at each webhook attempt's end, in the order they ended.
    posted_at_timeout: list[int] = []
    seen = Seen(lambda: posted_at_timeout.append(len(fake.of("chat.postMessage"))))
    logging.getLogger("bot.service.delivering.delivery").addHandler(seen)
    async with aiohttp.ClientSession() as session, receivers(RECEIVERS) as hanging:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=fake.api_url, session=session)

        async def client_for(team: str) -> AsyncWebClient:
            return client

        h.service.add_surface(SlackSurface(client_for=client_for))
        async with questions_api(h, settings, hanging, seen) as questions:
            for n, receiver in enumerate(hanging):
                raw = approval(
                    f"hook-{n}", {"surface": "console", "conversation": "c1"}, receiver.url
                )
                created = await questions.create(KEY, CREATE_QUESTION.validate_python(raw), raw)
                await questions.cancel(KEY, created.question["id"], "not needed")
            await hanging[0].arrived.wait()  # the webhooks are under way, and stuck

            raw = approval("slack", {"surface": "slack", "conversation": f"{TEAM}:C0CHAN"})
            await questions.create(KEY, CREATE_QUESTION.validate_python(raw), raw)
            # Long enough for every webhook to time out first, as each did before lanes.
            await fake.wait_for("chat.postMessage", seconds=300)
            assert posted_at_timeout == [] or posted_at_timeout[0] == 1


class WatchedClock(FixedClock):
    """A fixed clock that says when something is scheduled on it."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = asyncio.Event()

    def call_later(self, delay: float, callback: Callable[[], None], /) -> Scheduled:
        self.armed.set()
        return super().call_later(delay, callback)


@pytest.fixture
def clock() -> WatchedClock:
    return WatchedClock()


async def test_a_webhook_retry_goes_out_once_due_while_other_receivers_hang(
    harness: HarnessFactory, stores: Stores, settings: WebhookSettings, clock: WatchedClock
) -> None:
    """A 503's retry goes out when the clock reaches its due time, while 20 webhooks hang."""
    h = harness(stores, [], timers=clock)
    h.service.add_surface(RecordingSurface(name="console"))
    timeouts: list[int] = []
    seen = Seen(lambda: timeouts.append(1))
    async with (
        receivers(RECEIVERS + 1) as (flaky, *hanging),
        questions_api(h, settings, hanging, seen) as questions,
    ):
        flaky.status = 503
        flaky.release.set()
        for n, receiver in enumerate([flaky, *hanging]):
            raw = approval(f"hook-{n}", {"surface": "console", "conversation": "c1"}, receiver.url)
            created = await questions.create(KEY, CREATE_QUESTION.validate_python(raw), raw)
            await questions.cancel(KEY, created.question["id"], "not needed")
        for receiver in hanging:
            await receiver.arrived.wait()  # every other webhook is stuck in its attempt
        await clock.armed.wait()  # the 503 is counted, and its retry is due in 5 s
        logging.getLogger("bot.service.delivering.delivery").addHandler(seen)
        flaky.status = 200
        flaky.arrived.clear()
        clock.advance(5.0)
        await flaky.arrived.wait()
        assert (flaky.received, timeouts) == (2, [])
