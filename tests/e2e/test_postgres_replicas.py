"""Two `python -m bot` replicas on one PostgreSQL database, as a load balancer would see them.

Each test gets its own schema (so its own tables and its own NOTIFY filter),
explicit shared signing keys, and two servers on two ports.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest

from tests import waiting
from tests.e2e._client import APPROVE, DEPLOY_REPORT, STAGING, ConsoleClient
from tests.e2e._private_postgres import PrivateCluster
from tests.e2e._server import BotServer, StartBot
from tests.stores._proxy import Proxy

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

T = TypeVar("T")
KEYS = "k1:" + "x" * 48 + ",k0:" + "y" * 48
SETTLE = 30.0


@pytest.fixture
def replica_env(pg_url: str) -> dict[str, str]:
    return {"DATABASE_URL": pg_url, "BOT_SIGNING_KEYS": KEYS}


async def eventually(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    """Readiness wait on a replica: an error counts as not yet."""
    errors = (aiohttp.ClientError, TimeoutError, AssertionError)
    return await waiting.eventually(check, what=what, seconds=SETTLE, every=0.1, errors=errors)


class EventReader:
    """An open ``/api/events`` stream; ``changed(cid)`` waits for a notice about ``cid``."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.seen: list[str] = []

    async def changed(self, cid: str) -> None:
        async def read() -> None:
            while True:
                line = (await self._response.content.readline()).decode()
                if not line:
                    raise AssertionError("the event stream ended")
                if line.startswith("data:"):
                    key = json.loads(line.removeprefix("data:"))["conversation"]
                    self.seen.append(key)
                    if key == cid:
                        return

        await asyncio.wait_for(read(), SETTLE)


@asynccontextmanager
async def open_events(http: aiohttp.ClientSession, server: BotServer) -> AsyncIterator[EventReader]:
    async with http.get(
        f"{server.url}/api/events", timeout=aiohttp.ClientTimeout(None)
    ) as response:
        assert response.status == 200
        # The first frame ("retry:") arrives once the stream is subscribed to the hub.
        assert (await response.content.readline()).startswith(b"retry:")
        yield EventReader(response)


async def test_asked_through_a_answered_through_b_and_each_console_sees_the_other_live(
    start_bot: StartBot, http: aiohttp.ClientSession, replica_env: dict[str, str]
) -> None:
    """A question published through A is answered through B; pages on each redraw live."""
    a = await start_bot(**replica_env)
    b = await start_bot(**replica_env)
    api_a, api_b = ConsoleClient(http, a.url), ConsoleClient(http, b.url)
    async with open_events(http, a) as events_on_a, open_events(http, b) as events_on_b:
        await asked_on_a_answered_on_b(api_a, api_b, events_on_a, events_on_b)


async def asked_on_a_answered_on_b(
    api_a: ConsoleClient, api_b: ConsoleClient, events_on_a: EventReader, events_on_b: EventReader
) -> None:
    await api_a.send("ops", "deploy web")
    ask = await api_b.outstanding("ops", "ask_user")  # B reads what A published
    await api_b.answer_ok(ask["token"], STAGING)
    await events_on_a.changed("ops")  # A's page hears of B's answer

    approval = await api_a.outstanding("ops", "approval")
    await api_a.answer_ok(approval["token"], APPROVE)
    await events_on_b.changed("ops")  # B's page hears of A's answer
    run = await api_b.finished("ops")
    assert run["final_text"] == DEPLOY_REPORT
    assert run["status"] == "completed"
    # Answered once each, and the run started once, whichever replica is asked.
    for api in (api_a, api_b):
        feed = await api.feed("ops")
        assert len(feed["runs"]) == 1
        assert [q["status"] for q in feed["runs"][0]["questions"]] == ["answered", "answered"]


async def test_500_concurrent_redemptions_over_two_replicas_succeed_once(
    start_bot: StartBot, replica_env: dict[str, str]
) -> None:
    """500 answers with one token, alternating between A and B, all at once: one 200."""
    # The race is under test, not the console's per-address answer limit: all 500 come
    # from one loopback address.
    unlimited = {**replica_env, "BOT_CONSOLE_ANSWERS_PER_MINUTE": "100000"}
    a = await start_bot(**unlimited)
    b = await start_bot(**unlimited)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=120)
    ) as http:
        api_a, api_b = ConsoleClient(http, a.url), ConsoleClient(http, b.url)
        await api_a.send("ops", "deploy web")
        token = (await api_a.outstanding("ops", "ask_user"))["token"]
        results = await asyncio.gather(
            *((api_a if n % 2 else api_b).answer(token, STAGING) for n in range(500))
        )
        statuses = [status for status, _ in results]
        assert statuses.count(200) == 1, sorted(set(statuses))
        assert statuses.count(409) == 499, sorted(set(statuses))
        approval = await api_b.outstanding("ops", "approval")
        await api_b.answer_ok(approval["token"], APPROVE)
        run = await api_a.finished("ops")
        assert run["final_text"] == DEPLOY_REPORT
        winner = next(body for status, body in results if status == 200)
        assert winner["ok"] is True


async def test_sigkill_mid_resume_and_the_other_replica_finishes_without_rerunning_a_tool(
    start_bot: StartBot, http: aiohttp.ClientSession, replica_env: dict[str, str], tmp_path: Path
) -> None:
    """A dies inside a slow tool after a fast one finished; B takes the lapsed lease and
    finishes the run: the fast tool ran once, the slow one again with the same key."""
    log, hold = tmp_path / "tools.log", tmp_path / "hold"
    hold.touch()
    env = {
        **replica_env,
        "BOT_AGENT": "tests.e2e._replica_agent:factory",
        "BOT_LEASE_SECONDS": "2",
        "BOT_SWEEP_SECONDS": "0.2",
        "REPLICA_AGENT_LOG": str(log),
        "REPLICA_AGENT_HOLD": str(hold),
    }
    a = await start_bot(**env)
    b = await start_bot(**env)
    api_a, api_b = ConsoleClient(http, a.url), ConsoleClient(http, b.url)
    ask = await api_a.asked("ops", "go")
    await api_a.answer_ok(ask["token"], {"answers": {"Go ahead?": "yes"}})  # A resumes

    async def slow_began() -> bool:
        return log.exists() and "began slow" in log.read_text()

    await eventually(slow_began, "the slow tool starting on A")
    assert a.kill() == -9
    hold.unlink()

    run = await api_b.finished("ops", seconds=SETTLE)
    assert run["status"] == "completed"
    assert run["final_text"] == "finished: fast done; slow done"
    lines = log.read_text().splitlines()
    fast = [line for line in lines if line.startswith("finished fast")]
    slow = [line.split()[2] for line in lines if line.startswith("began slow")]
    assert len(fast) == 1, lines  # finished before the crash: never run again
    assert len(slow) == 2 and slow[0] == slow[1], lines  # in flight: again, same key
    assert a.process is not None and f"pid={a.process.pid}" in fast[0]  # it ran on A
    assert sum(line.startswith("finished slow") for line in lines) == 1


async def test_a_replica_cut_off_from_postgres_is_unhealthy_keeps_tokens_and_recovers(
    start_bot: StartBot, http: aiohttp.ClientSession, pg_url: str
) -> None:
    """Through a relay we cut: /healthz 503 and "try again" (token unspent); back: it works."""
    proxy = await Proxy().start()
    try:
        proxied = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        server = await start_bot(DATABASE_URL=proxied, BOT_SIGNING_KEYS=KEYS)
        api = ConsoleClient(http, server.url)
        ask = await api.asked("ops")

        proxy.cut()
        assert await api.healthz() == 503
        status, body = await api.answer(ask["token"], STAGING)
        assert status == 503 and "try again" in body["error"]
        proxy.restore()

        async def healthy() -> bool:
            return await api.healthz() == 200

        await eventually(healthy, "healthz 200 after the network came back")
        again = await api.outstanding("ops", "ask_user")
        assert again["token"] == ask["token"]  # still open: nothing was spent
        await api.answer_ok(ask["token"], STAGING)
        approval = await api.outstanding("ops", "approval")
        await api.answer_ok(approval["token"], APPROVE)
        assert (await api.finished("ops"))["final_text"] == DEPLOY_REPORT
    finally:
        await proxy.close()


def _restart(cluster: PrivateCluster) -> None:
    """What ``pg_ctlcluster ... restart`` does: a fast shutdown (connections cut), a start."""
    cluster.stop()
    cluster.start()


async def test_a_postgres_restart_during_a_run_loses_nothing_and_service_resumes(
    start_bot: StartBot, http: aiohttp.ClientSession, cluster: PrivateCluster
) -> None:
    """The real server restarts while a question is open: both replicas come back by
    themselves, the question and its token survive, and the run completes. The server is
    one of the test's own (``cluster``): the machine's is every other test's, and every
    parallel worker's, so it is never the one restarted."""
    replica_env = {"DATABASE_URL": cluster.url, "BOT_SIGNING_KEYS": KEYS}
    a = await start_bot(**replica_env)
    b = await start_bot(**replica_env)
    api_a, api_b = ConsoleClient(http, a.url), ConsoleClient(http, b.url)
    ask = await api_a.asked("ops")

    await asyncio.to_thread(_restart, cluster)

    for api in (api_a, api_b):

        async def healthy(api: ConsoleClient = api) -> bool:
            return await api.healthz() == 200

        await eventually(healthy, "healthz 200 after the restart")
    after = await api_b.outstanding("ops", "ask_user", seconds=SETTLE)
    assert after["interrupt_id"] == ask["interrupt_id"] and after["token"] == ask["token"]

    async def answered() -> dict[str, Any] | None:
        status, body = await api_b.answer(ask["token"], STAGING)
        return body if status == 200 else None

    await eventually(answered, "the answer accepted after the restart")
    approval = await api_a.outstanding("ops", "approval", seconds=SETTLE)
    await api_a.answer_ok(approval["token"], APPROVE)
    run = await api_b.finished("ops", seconds=SETTLE)
    assert run["final_text"] == DEPLOY_REPORT
    assert len((await api_a.feed("ops"))["runs"]) == 1
