"""Leases of the runs a process drives are renewed until the work ends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import pytest

from bot.service.running.lease_keeper import LeaseKeeper
from tests.support import FakeTimers

LEASE = 3.0  # a third of it is 1.0, exactly


class Leases:
    """Records renewals; ``held`` says whether the store still has us as the owner."""

    def __init__(self) -> None:
        self.renewed: list[tuple[str, str]] = []
        self.until: list[float] = []
        self.held = True
        self.fail: Exception | None = None

    async def renew(self, run_id: str, owner: str, *, until: float) -> bool:
        if self.fail is not None:
            raise self.fail
        self.renewed.append((run_id, owner))
        self.until.append(until)
        return self.held


def keeper(leases: Leases, tasks: set[asyncio.Task[None]], timers: FakeTimers) -> LeaseKeeper:
    def spawn(work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    return LeaseKeeper(
        leases,  # type: ignore[arg-type]  # only renew is used
        owner="me",
        lease_seconds=LEASE,
        clock=timers,
        spawn=spawn,
        timers=timers,
    )


async def test_a_held_lease_is_renewed_every_third_of_a_lease_until_dropped() -> None:
    """Renewals keep coming while the work goes on, and stop when it ends."""
    leases, tasks, timers = Leases(), set[asyncio.Task[None]](), FakeTimers()
    keep = keeper(leases, tasks, timers)
    keep.keep("r1")
    await timers.advance(0.5)
    assert leases.renewed == []  # not before a third of a lease
    await timers.advance(4.5)  # five thirds of a lease in all
    assert len(leases.renewed) == 5
    assert set(leases.renewed) == {("r1", "me")}
    assert leases.until == [n + LEASE for n in (1.0, 2.0, 3.0, 4.0, 5.0)]  # a lease from each
    keep.drop("r1")
    await asyncio.gather(*tasks)
    count = len(leases.renewed)
    assert timers.pending == []
    await timers.advance(2 * LEASE)
    assert len(leases.renewed) == count


async def test_a_lost_lease_is_said_once_and_no_longer_renewed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Another worker took the run: one warning, and no more renewals."""
    leases, tasks, timers = Leases(), set[asyncio.Task[None]](), FakeTimers()
    leases.held = False
    keep = keeper(leases, tasks, timers)
    keep.keep("r1")
    await timers.advance(5 * LEASE / 3)
    await asyncio.gather(*tasks)
    assert leases.renewed == [("r1", "me")]
    assert timers.pending == []
    lost = [r for r in caplog.records if "lost the lease" in r.getMessage()]
    assert len(lost) == 1 and lost[0].levelno == logging.WARNING


async def test_a_store_outage_does_not_stop_the_renewals() -> None:
    """A renewal that meets an outage is tried again a third of a lease later."""
    leases, tasks, timers = Leases(), set[asyncio.Task[None]](), FakeTimers()
    leases.fail = ConnectionError("connection reset")  # an outage, per is_outage
    keep = keeper(leases, tasks, timers)
    keep.keep("r1")
    await timers.advance(LEASE / 3)  # the first renewal meets the outage
    await asyncio.gather(*tasks)
    assert leases.renewed == []
    assert len(timers.pending) == 1  # and the next is armed all the same
    leases.fail = None
    await timers.advance(LEASE / 3)
    keep.drop_all()
    await asyncio.gather(*tasks)
    assert leases.renewed == [("r1", "me")]
    assert timers.pending == []
