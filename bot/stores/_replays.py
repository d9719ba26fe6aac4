"""Requests seen lately, shared by every replica: written once for both backends.

A signed platform request is claimed by its signature before it runs and
settled with its first answer, so a replay, wherever it lands, gets that
answer and changes nothing. Commands' idempotency keys (``once_keys``) are
written by the units, in the transaction of the command's effect.
"""

from __future__ import annotations

from bot.stores._sql import Statements
from bot.stores.ports import Seen, StoredResponse

# A record whose window has passed is taken over as if it were not there.
_CLAIM_SEEN = (
    "INSERT INTO seen_requests (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE"
    " SET expires_at = excluded.expires_at, status = NULL, body = NULL, content_type = NULL"
    " WHERE seen_requests.expires_at <= ?"
)
_PRUNE_SEEN = "DELETE FROM seen_requests WHERE expires_at <= ?"
PRUNE_EVERY = 100
_SEEN = "SELECT status, body, content_type FROM seen_requests WHERE key = ? AND expires_at > ?"
_SETTLE_SEEN = (
    "UPDATE seen_requests SET status = ?, body = ?, content_type = ?"
    " WHERE key = ? AND status IS NULL"
)
_FORGET_SEEN = "DELETE FROM seen_requests WHERE key = ? AND status IS NULL"


class SqlReplays:
    """Seen requests in ``seen_requests``; commands' keys in ``once_keys`` (the units write
    them, with the command's effect)."""

    def __init__(self, db: Statements) -> None:
        self._db = db
        self._claims = 0

    async def claim(self, key: str, *, now: float, until: float) -> Seen:
        # Expired records are pruned with every PRUNE_EVERY-th first claim, in its
        # transaction: the table stays within one window (plus that many), and most
        # requests cost one statement.
        self._claims += 1
        if self._claims % PRUNE_EVERY == 1:
            claimed = await self._db.in_order(
                [(_CLAIM_SEEN, (key, until, now)), (_PRUNE_SEEN, (now,))]
            )
        else:
            claimed = bool(await self._db.write(_CLAIM_SEEN, key, until, now))
        if claimed:
            return Seen(first=True)
        rows = await self._db.rows(_SEEN, key, now)
        if not rows or rows[0]["status"] is None:
            return Seen(first=False)  # in flight elsewhere, or its process died
        row = rows[0]
        return Seen(
            False, StoredResponse(int(row["status"]), bytes(row["body"]), row["content_type"])
        )

    async def settle(self, key: str, answered: StoredResponse | None) -> None:
        if answered is None:
            await self._db.write(_FORGET_SEEN, key)
            return
        await self._db.write(
            _SETTLE_SEEN, answered.status, answered.body, answered.content_type, key
        )

    async def applied(self, key: str) -> bool:
        return bool(await self._db.rows("SELECT 1 FROM once_keys WHERE key = ?", key))
