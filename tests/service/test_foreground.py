"""Acks first: background work waits for a stream of platform requests, but not forever."""

from __future__ import annotations

import asyncio

from bot.human import ASK_USER
from bot.service.answering.outcomes import Redeemed
from bot.service.running.foreground import DEFAULT_QUIET_SECONDS, Foreground
from bot.stores.ports import Stores
from bot.stores.urgency import waited_on
from bot.testing import call, calls, question, say
from tests.support import REQUESTER, WHERE, FakeTimers, HarnessFactory

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
STAGING = {"answers": {"Which environment?": "staging"}}


async def test_with_no_request_in_sight_background_work_goes_at_once() -> None:
    """Nothing waits on us: yielding returns without sleeping."""
    timers = FakeTimers()
    foreground = Foreground(quiet_seconds=10.0, timers=timers)
    task = asyncio.create_task(foreground.yield_to())
    await asyncio.sleep(0)  # one turn of the loop: the task's first step
    assert task.done()  # it never suspended, so it waited on no timer
    assert timers.pending == [] and timers.now == 0.0
    await task


async def test_background_work_waits_until_requests_stop_arriving() -> None:
    """Work owed during a burst starts once the burst has been quiet for a while."""
    timers = FakeTimers()
    foreground = Foreground(quiet_seconds=5.0, max_defer_seconds=100.0, timers=timers)
    started: list[str] = []

    async def owed() -> None:
        await foreground.yield_to()
        started.append("resume")

    with foreground.request():
        task = asyncio.create_task(owed())
        await timers.armed()  # the owed work is held
    for _ in range(5):  # requests keep arriving, closer together than the quiet period
        await timers.advance(1.0)
        with foreground.request():
            assert started == []
    await timers.advance(4.0)
    assert started == []  # not yet quiet for the whole period
    await timers.advance(1.0)
    assert started == ["resume"]
    await task


async def test_a_sustained_burst_defers_background_work_only_so_long() -> None:
    """However long requests keep coming, owed work starts after ``max_defer_seconds``."""
    timers = FakeTimers()
    foreground = Foreground(quiet_seconds=60.0, max_defer_seconds=5.0, timers=timers)
    with foreground.request():
        task = asyncio.create_task(foreground.yield_to())
        await timers.armed()
        await timers.advance(4.0)
        assert not task.done()
        await timers.advance(1.0)
        assert task.done()
        await task


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
    timers = FakeTimers()
    foreground = Foreground(quiet_seconds=5.0, max_defer_seconds=1.0, timers=timers)
    started: list[int] = []

    async def owed(n: int) -> None:
        await foreground.yield_to()
        started.append(n)

    with foreground.request():
        tasks = [asyncio.create_task(owed(n)) for n in range(5)]
        await timers.armed()
    for _ in range(6):  # 6 s of requests 1 s apart: never quiet for 5 s
        await timers.advance(1.0)
        with foreground.request():
            pass
    # Overdue at 1 s, the first goes; the next a quiet period later, at 6 s; in order.
    assert started == [0, 1]
    await timers.advance(5.0)  # then quiet: the rest
    assert started == [0, 1, 2, 3, 4]
    await asyncio.gather(*tasks)


async def test_the_resume_an_ack_owes_starts_after_the_acks_stop(
    sqlite_stores: Stores, harness: HarnessFactory
) -> None:
    """Spent before the ack, resumed after it: the model is not asked while acks go on."""
    timers = FakeTimers()
    h = harness(sqlite_stores, [calls(ASK), say("done")], foreground=Foreground(timers=timers))
    await h.start()
    asked = len(h.provider.calls)
    foreground = h.service.foreground
    with foreground.request():  # a click, acked when this block ends
        outcome = await h.service.redeem(
            h.surface.last_token, STAGING, responder=REQUESTER, scope=WHERE.scope
        )
        assert isinstance(outcome, Redeemed)
        await timers.armed()  # the resume it owes is held
        await timers.advance(0.01)
    with foreground.request():  # the next click, 10 ms later
        await timers.advance(0.01)
        assert len(h.provider.calls) == asked  # owed, durably, but not started
    await timers.advance(DEFAULT_QUIET_SECONDS)  # the acks have stopped
    await h.service.wait_idle()
    assert len(h.provider.calls) == asked + 1
    assert [text for _, text, _ in h.surface.outcomes] == ["done"]
