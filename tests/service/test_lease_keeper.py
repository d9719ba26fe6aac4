"""Leases of the runs a process drives are renewed until the work ends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import pytest

from bot.service.lease_keeper import LeaseKeeper


class Leases:
    """Records renewals; ``held`` says whether the store still has us as the owner."""

    def __init__(self) -> None:
        self.renewed: list[tuple[str, str]] = []
        self.held = True
        self.fail: Exception | None = None

    async def renew(self, run_id: str, owner: str, *, until: float) -> bool:
        if self.fail is not None:
            raise self.fail
        self.renewed.append((run_id, owner))
        return self.held


def keeper(leases: Leases, tasks: set[asyncio.Task[None]]) -> LeaseKeeper:
    def spawn(work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    return LeaseKeeper(
        leases,  # type: ignore[arg-type]  # only renew is used
        owner="me",
        lease_seconds=0.06,
        clock=lambda: 0.0,
        spawn=spawn,
    )


async def test_a_held_lease_is_renewed_every_third_of_a_lease_until_dropped() -> None:
    """Renewals keep coming while the work goes on, and stop when it ends."""
    leases, tasks = Leases(), set[asyncio.Task[None]]()
    keep = keeper(leases, tasks)
    keep.keep("r1")
    await asyncio.sleep(0.1)  # about five thirds of a lease
    assert len(leases.renewed) >= 3
    assert set(leases.renewed) == {("r1", "me")}
    keep.drop("r1")
    await asyncio.gather(*tasks)
    count = len(leases.renewed)
    await asyncio.sleep(0.05)
    assert len(leases.renewed) == count


async def test_a_lost_lease_is_said_once_and_no_longer_renewed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Another worker took the run: one warning, and no more renewals."""
    leases, tasks = Leases(), set[asyncio.Task[None]]()
    leases.held = False
    keep = keeper(leases, tasks)
    keep.keep("r1")
    await asyncio.sleep(0.1)
    await asyncio.gather(*tasks)
    assert leases.renewed == [("r1", "me")]
    lost = [r for r in caplog.records if "lost the lease" in r.getMessage()]
    assert len(lost) == 1 and lost[0].levelno == logging.WARNING


async def test_a_store_outage_does_not_stop_the_renewals() -> None:
    """A renewal that meets an outage is tried again a third of a lease later."""
    leases, tasks = Leases(), set[asyncio.Task[None]]()
    leases.fail = ConnectionError("connection reset")  # an outage, per is_outage
    keep = keeper(leases, tasks)
    keep.keep("r1")
    await asyncio.sleep(0.05)
    leases.fail = None
    await asyncio.sleep(0.06)
    keep.drop_all()
    await asyncio.gather(*tasks)
    assert leases.renewed
