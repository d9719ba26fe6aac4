"""Signed Slack requests seen inside the timestamp window, and how each was answered.

A signature covers the timestamp and the whole body, so a second request
with one already seen is the same request sent again (a replay, or a
proxy's retry): it is answered as the first was and changes nothing.
Slack's own retries are signed afresh (new timestamp) and are deduplicated
further in, by event id.

``SeenSignatures`` is the port; ``InProcessSignatures`` keeps the record
in this process, bounded and expiring: the first check, which also makes
a replay arriving while the first is in flight wait for its answer. The
record every replica shares is the store's (``bot.stores.ports.Replays``),
consulted next by the bridge; an admin command's effect is further keyed
(``AdminService``'s ``key``), so even a replay that finds no answer, because
the first request's process died, applies nothing twice.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from adapters.slack._edge import TIMESTAMP_WINDOW_SECONDS
from bot.stores.ports import Answered

__all__ = ["KEEP_SECONDS", "Answered", "InProcessSignatures", "SeenSignatures"]

# A signature is good for the timestamp window either way of its timestamp.
KEEP_SECONDS = 2 * TIMESTAMP_WINDOW_SECONDS


class SeenSignatures(Protocol):
    def claim(self, signature: str) -> asyncio.Future[Answered] | None:
        """None for a signature not seen before (now recorded; call ``settle``);
        else the future of the first request's answer."""

    def settle(self, signature: str, answered: Answered | None) -> None:
        """The first request's answer; None if it failed and a resend may try again."""


class InProcessSignatures:
    """At most ``capacity`` signatures, each kept for the timestamp window (both ways)."""

    def __init__(
        self,
        *,
        capacity: int = 50_000,
        keep_seconds: float = KEEP_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.keep_seconds = keep_seconds
        self._clock = clock
        self._seen: OrderedDict[str, tuple[float, asyncio.Future[Answered]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def claim(self, signature: str) -> asyncio.Future[Answered] | None:
        now = self._clock()
        self._expire(now)
        found = self._seen.get(signature)
        if found is not None:
            return found[1]
        while len(self._seen) >= self.capacity:
            self._seen.popitem(last=False)
        future: asyncio.Future[Answered] = asyncio.get_running_loop().create_future()
        self._seen[signature] = (now + self.keep_seconds, future)
        return None

    def settle(self, signature: str, answered: Answered | None) -> None:
        found = self._seen.get(signature)
        if found is None:
            return
        _, future = found
        if answered is None:
            del self._seen[signature]
            if not future.done():
                future.cancel()
            return
        if not future.done():
            future.set_result(answered)

    def _expire(self, now: float) -> None:
        # Entries are in insertion order, which is expiry order.
        while self._seen:
            signature, (expires, _) = next(iter(self._seen.items()))
            if expires > now:
                return
            del self._seen[signature]
