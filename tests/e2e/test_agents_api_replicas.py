"""The agents API on two replicas of one PostgreSQL: asked on A, answered on B, A wakes."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from tests.e2e._api import Api, api_env, approval
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

KEYS = "k1:" + "x" * 48


async def test_a_long_poll_on_one_replica_wakes_on_an_answer_through_the_other(
    start_bot: StartBot, http: aiohttp.ClientSession, pg_url: str
) -> None:
    """NOTIFY wakes A's waiter: it answers with the close long before its 30 s are up."""
    env = {"DATABASE_URL": pg_url, "BOT_SIGNING_KEYS": KEYS, **api_env("console:*"), **OPERATOR}
    a = await start_bot(**env)
    b = await start_bot(**env)
    api_a = Api(http, a.url)
    status, created = await api_a.ask(
        approval("cross", {"surface": "console", "conversation": "rep-1"})
    )
    assert status == 201, created
    waits = [asyncio.create_task(api_a.get(created["id"], wait=30)) for _ in range(3)]
    on_b = ConsoleClient(http, b.url)
    question = await on_b.outstanding("rep-1", "approval")
    await on_b.answer_ok(question["token"], APPROVE)
    answered_at = time.monotonic()
    results = await asyncio.wait_for(asyncio.gather(*waits), 30)
    woke = time.monotonic() - answered_at
    print(f"A's long-polls answered {woke * 1000:.0f} ms after B acknowledged the answer")
    for status, answered in results:
        assert status == 200 and answered["status"] == "answered", answered
    # The same object on either replica (its delivery mark may land in between).
    status, on_b_object = await Api(http, b.url).get(created["id"])
    assert status == 200
    assert on_b_object | {"delivery": None} == results[0][1] | {"delivery": None}
