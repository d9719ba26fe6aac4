"""Acks first: background work waits for a stream of platform requests, but not forever."""

from __future__ import annotations

import asyncio

from bot.human import ASK_USER
from bot.outcomes import Redeemed
from bot.service.foreground import Foreground
from bot.stores.ports import Stores
from bot.stores.urgency import waited_on
from bot.testing import call, calls, question, say
from tests.support import REQUESTER, WHERE, HarnessFactory

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
STAGING = {"answers": {"Which environment?": "staging"}}


async def test_with_no_request_in_sight_background_work_goes_at_once() -> None:
    """Nothing waits on us: yielding returns without sleeping."""
    foreground = Foreground(quiet_seconds=10.0)
    loop = asyncio.get_running_loop()
    began = loop.time()
    await foreground.yield_to()
    assert loop.time() - began < 1.0  # far below the 10 s quiet period


async def test_background_work_waits_until_requests_stop_arriving() -> None:
    """Work owed during a burst starts once the burst has been quiet for a while."""
    foreground = Foreground(quiet_seconds=0.05, max_defer_seconds=10.0)
    started: list[str] = []

    async def owed() -> None:
        await foreground.yield_to()
        started.append("resume")

    with foreground.request():
        task = asyncio.create_task(owed())
        await asyncio.sleep(0)
    for _ in range(5):  # requests keep arriving, closer together than the quiet period
        await asyncio.sleep(0.01)
        with foreground.request():
            assert started == []
    await asyncio.wait_for(task, timeout=5.0)
    assert started == ["resume"]


async def test_a_sustained_burst_defers_background_work_only_so_long() -> None:
    """However long requests keep coming, owed work starts after ``max_defer_seconds``."""
    foreground = Foreground(quiet_seconds=60.0, max_defer_seconds=0.05)
    with foreground.request():
        await asyncio.wait_for(foreground.yield_to(), timeout=5.0)


async def test_only_what_a_request_awaits_is_waited_on() -> None:
    """A request's handling is marked; background work it starts is not, once it yields."""
    foreground = Foreground(quiet_seconds=0.0)
    seen: list[bool] = []

    async def background() -> None:
        await foreground.yield_to()
        seen.append(waited_on())

    assert not waited_on()
    with foreground.request():
        assert waited_on()
        task = asyncio.create_task(background())  # inherits the request's context
    assert not waited_on()
    await task
    assert seen == [False]


async def test_work_held_past_its_time_goes_one_at_a_time_while_requests_keep_coming() -> None:
    """A backlog released at once would hold the loop; overdue work trickles out instead."""
    foreground = Foreground(quiet_seconds=0.05, max_defer_seconds=0.01)
    started: list[int] = []

    async def owed(n: int) -> None:
        await foreground.yield_to()
        started.append(n)

    with foreground.request():
        tasks = [asyncio.create_task(owed(n)) for n in range(5)]
        await asyncio.sleep(0)
    for _ in range(6):  # 60 ms of requests 10 ms apart: never quiet for 50 ms
        await asyncio.sleep(0.01)
        with foreground.request():
            pass
    assert 1 <= len(started) <= 3  # about one per 50 ms once overdue, in order
    assert started == sorted(started)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=5.0)  # then quiet: the rest
    assert started == [0, 1, 2, 3, 4]


async def test_the_resume_an_ack_owes_starts_after_the_acks_stop(
    sqlite_stores: Stores, harness: HarnessFactory
) -> None:
    """Spent before the ack, resumed after it: the model is not asked while acks go on."""
    h = harness(sqlite_stores, [calls(ASK), say("done")])
    await h.start()
    asked = len(h.provider.calls)
    foreground = h.service.foreground
    with foreground.request():  # a click, acked when this block ends
        outcome = await h.service.redeem(
            h.surface.last_token, STAGING, responder=REQUESTER, scope=WHERE.scope
        )
        assert isinstance(outcome, Redeemed)
        await asyncio.sleep(0.01)
    with foreground.request():  # the next click, 10 ms later
        await asyncio.sleep(0.01)
        assert len(h.provider.calls) == asked  # owed, durably, but not started
    await h.service.wait_idle()
    assert len(h.provider.calls) == asked + 1
    assert [text for _, text, _ in h.surface.outcomes] == ["done"]
