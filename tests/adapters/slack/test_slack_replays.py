"""The record of seen signatures: bounded, expiring, and a failed first request retried."""

from __future__ import annotations

import asyncio

from adapters.slack._edge import InProcessSignatures
from bot.stores.ports import StoredResponse

OK = StoredResponse(200, b"{}", "application/json")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_seen_signature_gets_the_first_answer() -> None:
    seen = InProcessSignatures()
    assert seen.claim("v0=a") is None
    replay = seen.claim("v0=a")
    assert replay is not None and not replay.done()
    seen.settle("v0=a", OK)
    assert await replay == OK
    assert (await seen.claim("v0=a")) == OK  # type: ignore[misc]


async def test_entries_expire_after_the_window_and_the_record_stays_bounded() -> None:
    clock = Clock()
    seen = InProcessSignatures(capacity=3, keep_seconds=600, clock=clock)
    for name in "abc":
        assert seen.claim(name) is None
        seen.settle(name, OK)
    assert seen.claim("d") is None  # the oldest ("a") makes room
    assert len(seen) == 3
    clock.now = 601
    assert seen.claim("b") is None  # expired: a new request again
    assert len(seen) == 1


async def test_a_first_request_that_failed_lets_its_replay_be_the_first() -> None:
    seen = InProcessSignatures()
    assert seen.claim("v0=a") is None
    replay = seen.claim("v0=a")
    assert replay is not None
    seen.settle("v0=a", None)
    await asyncio.sleep(0)
    assert replay.cancelled()
    assert seen.claim("v0=a") is None
