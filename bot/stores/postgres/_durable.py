"""Durable execution on PostgreSQL: run leases, the step journal, the delivery outbox.

Several replicas race for the same rows here; each race is settled by a
conditional UPDATE that PostgreSQL re-checks against the row's latest
version once the competing writer commits (READ COMMITTED), so exactly one
replica's update matches. ``FOR UPDATE SKIP LOCKED`` in front of those
updates lets a replica pass over rows another one is taking right now
instead of queueing behind it. The rows are written by the lifecycle's
writes (``_unit``), with the state change that owes them, and marked
delivered by its ``delivered`` step (``_unit`` too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.questions.records import DeliveryState, OutboxRow
from bot.stores._rows import PENDING, delivery_from_row
from bot.stores.postgres._db import Database


# Taken over only when free, lapsed or already ours.
def _followed(row: str) -> str:
    """Another pending row of the run waits behind ``row`` (``OutboxRow.followed``)."""
    return (
        "EXISTS (SELECT 1 FROM outbox AS f"  # noqa: S608 - our own constants
        f" WHERE f.run_id = {row}.run_id AND f.surface = {row}.surface"
        f" AND f.state = '{PENDING}' AND f.id > {row}.id)"
        " AS followed"
    )


def _first_owed(row: str) -> str:
    """No pending row of the run on ``row``'s surface was owed before ``row``."""
    return (
        "NOT EXISTS (SELECT 1 FROM outbox AS e"  # noqa: S608 - our own constants
        f" WHERE e.run_id = {row}.run_id AND e.surface = {row}.surface"
        f" AND e.state = '{PENDING}' AND e.id < {row}.id)"
    )


# The oldest pending row of each run on each surface only: a run's messages keep
# their order there, and one that waits for a retry holds back the ones owed after
# it (another surface's posts of a question on several routes go on).
_DUE = f"""
SELECT o.*, (o.claimed_by = $1 AND o.claimed_until > $2) AS mine, {_followed("o")}
FROM outbox AS o
WHERE o.state = '{PENDING}' AND o.next_at <= $2 AND (o.claimed_until <= $2 OR o.claimed_by = $1)
  AND o.surface = ANY($3::text[]) AND {_first_owed("o")}
ORDER BY o.id LIMIT $4
"""  # noqa: S608 - our own constants
# Claims due rows nobody holds, skipping those another replica is claiming
# this instant: concurrent claimers each take different rows in one pass
# (no one queues behind another's locks), and PostgreSQL re-checks each
# locked row's condition, so a row claimed since it was read is not taken.
_TAKE = f"""
UPDATE outbox SET claimed_until = $1, claimed_by = $2
WHERE id IN (
    SELECT o.id FROM outbox AS o
    WHERE o.state = '{PENDING}' AND o.next_at <= $3 AND o.claimed_until <= $3
      AND o.surface = ANY($4::text[]) AND {_first_owed("o")}
    ORDER BY o.id LIMIT $5
    FOR UPDATE OF o SKIP LOCKED)
RETURNING *, {_followed("outbox")}
"""  # noqa: S608 - our own constants


_FAILED = """
WITH given_up AS (
    UPDATE outbox SET attempts = attempts + 1, state = $1, last_error = $2, done_at = $3
    WHERE id = $4 RETURNING run_id
)
UPDATE runs SET delivery_error = $2, updated_at = $3
FROM given_up WHERE runs.run_id = given_up.run_id
"""


@dataclass  # tests patch methods on the instance
class PostgresOutbox:
    """Owed messages; replicas claim rows with ``FOR UPDATE SKIP LOCKED``, never the same one."""

    db: Database

    async def claim(
        self, now: float, *, until: float, owner: str, surfaces: Sequence[str], limit: int = 50
    ) -> list[OutboxRow]:
        # Read first, without locks: most passes find only rows born ours, or nothing.
        wanted = list(surfaces)
        found = await self.db.fetch(_DUE, owner, now, wanted, max(limit, 0))
        rows = [row for row in found if row["mine"]]
        if len(rows) < len(found):
            rows.extend(await self.db.fetch(_TAKE, until, owner, now, wanted, limit - len(rows)))
        taken = (delivery_from_row(row, followed=row["followed"]) for row in rows)
        return sorted(taken, key=lambda d: d.delivery_id)

    async def retry(self, delivery_id: int, *, next_at: float, error: str) -> None:
        await self.db.execute(
            "UPDATE outbox SET attempts = attempts + 1, next_at = $1, claimed_until = 0,"
            " claimed_by = '', last_error = $2 WHERE id = $3",
            next_at,
            error,
            delivery_id,
        )

    async def failed(self, delivery_id: int, *, at: float, error: str) -> None:
        await self.db.execute(_FAILED, str(DeliveryState.FAILED), error, at, delivery_id)

    async def of_run(self, run_id: str) -> list[OutboxRow]:
        rows = await self.db.fetch("SELECT * FROM outbox WHERE run_id = $1 ORDER BY id", run_id)
        return [delivery_from_row(row) for row in rows]
