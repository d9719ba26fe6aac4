"""Renewing the leases of the runs this process drives, every third of the lease.

A timer per held run rather than a heartbeat task per run: arming and
disarming a timer costs a few microseconds, while a task had to be created,
cancelled and awaited for every piece of work, however short, which was a
visible share of a whole pause-and-resume cycle. A renewal itself runs in an
owned task only when its timer fires, so only work that outlives a third of
the lease ever pays for one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from bot.stores.errors import is_outage
from bot.stores.ports import Leases

log = logging.getLogger(__name__)


class Timer(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    """The part of an event loop ``LeaseKeeper`` keeps time with: the running loop's by default."""

    def call_later(
        self, delay: float, callback: Callable[[str], object], run_id: str, /
    ) -> Timer: ...


class LeaseKeeper:
    """Keeps each held run's lease alive until ``drop``; says so if one is lost."""

    def __init__(
        self,
        leases: Leases,
        *,
        owner: str,
        lease_seconds: float,
        clock: Callable[[], float],
        spawn: Callable[[Coroutine[Any, Any, None], str], None],
        timers: Timers | None = None,
    ) -> None:
        self._leases = leases
        self._owner = owner
        self._lease_seconds = lease_seconds
        self._clock = clock
        self._spawn = spawn
        # None: the running loop's timers (a test may pass a fake).
        self._loop_timers = timers
        self._timers: dict[str, Timer] = {}

    def keep(self, run_id: str) -> None:
        """Renew ``run_id``'s lease a third of a lease from now, and so on until ``drop``."""
        self.drop(run_id)
        timers = self._loop_timers
        if timers is None:
            timers = asyncio.get_running_loop()
        self._timers[run_id] = timers.call_later(self._lease_seconds / 3, self._due, run_id)

    def drop(self, run_id: str) -> None:
        """Stop renewing; a renewal already under way finds the run dropped and stops."""
        timer = self._timers.pop(run_id, None)
        if timer is not None:
            timer.cancel()

    def drop_all(self) -> None:
        for run_id in list(self._timers):
            self.drop(run_id)

    async def release(self, run_id: str) -> None:
        """Give the lease up, so the next start takes the run over at once."""
        try:
            await self._leases.release(run_id, self._owner)
        except Exception as error:
            if not is_outage(error):
                raise
            # Unreleased, the lease lapses on its own and recovery takes the run then.
            log.warning("could not release a run's lease", extra={"run_id": run_id})

    def _due(self, run_id: str) -> None:
        self._spawn(self._renew(run_id), f"lease {run_id}")

    async def _renew(self, run_id: str) -> None:
        until = self._clock() + self._lease_seconds
        try:
            renewed = await self._leases.renew(run_id, self._owner, until=until)
        except Exception as error:
            if not is_outage(error):
                raise
            # Try again a third of a lease on; the lease may still hold by then.
            log.warning("could not renew a run's lease", extra={"run_id": run_id})
            renewed = True
        if run_id not in self._timers:
            return  # the work ended while the renewal was under way
        if renewed:
            self.keep(run_id)
            return
        self._timers.pop(run_id, None)
        log.warning("lost the lease of a run we were driving", extra={"run_id": run_id})
