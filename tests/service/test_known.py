"""A run's origin is read once per process and remembered, within a bound."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from bot.service.running.known import KnownRuns
from bot.stores import RunRecord
from bot.stores.ports import Stores
from tests.support import steps


def run(run_id: str) -> RunRecord:
    return RunRecord(
        run_id=run_id, scope="T1", surface="test", requester="U1", text="go", created_at=1.0
    )


async def test_a_run_is_read_once_then_remembered(sqlite_stores: Stores, db_path: Path) -> None:
    """The second ask is served from memory: the store would now say something else."""
    stores = sqlite_stores
    await steps(stores).start(run("r1"))
    known = KnownRuns(stores.runs)
    first = await known.origin("r1")
    with closing(sqlite3.connect(db_path)) as conn, conn:  # behind the store's back
        conn.execute("DELETE FROM runs")
    assert await stores.runs.get("r1") is None
    assert await known.origin("r1") == first
    assert await known.origin("nobody") is None


async def test_the_oldest_runs_are_forgotten_past_the_bound(sqlite_stores: Stores) -> None:
    """Bounded: remembering one more forgets the oldest, which is read again if asked."""
    stores = sqlite_stores
    known = KnownRuns(stores.runs, kept=2)
    for run_id in ("r1", "r2", "r3"):
        known.remember(run(run_id))
    assert await known.origin("r1") is None  # forgotten, and not in the store
    assert await known.origin("r3") == run("r3")
