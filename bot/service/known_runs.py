"""Runs this process created or read lately, kept for what never changes about them.

A run's origin (its id, scope, surface, conversation, requester and text) is
fixed when it is created. Surfaces read only that to deliver a message, and
the answer policy only that to decide who may answer, so they may share one
remembered record instead of reading the run again for every message and
every click. Its status and outcome do change: read those from the store.
"""

from __future__ import annotations

from bot.stores.ports import Runs
from bot.stores.records import RunRecord

# Enough for every run a busy process has in flight; the oldest go first.
DEFAULT_KEPT = 1024


class KnownRuns:
    """A bounded map of run id to the run's record, for its origin only."""

    def __init__(self, runs: Runs, *, kept: int = DEFAULT_KEPT) -> None:
        self._runs = runs
        self._kept = kept
        self._known: dict[str, RunRecord] = {}

    def remember(self, run: RunRecord) -> None:
        if run.run_id not in self._known and len(self._known) >= self._kept:
            self._known.pop(next(iter(self._known)))
        self._known[run.run_id] = run

    async def origin(self, run_id: str) -> RunRecord | None:
        """The run as remembered, or as read now (then remembered); None if unknown."""
        known = self._known.get(run_id)
        if known is not None:
            return known
        run = await self._runs.get(run_id)
        if run is not None:
            self.remember(run)
        return run
