"""Fan-out of "conversation changed" notices to the open event streams.

A notice carries no content, only which conversation to re-read, so a slow
reader loses nothing by having repeats folded together: each subscription
keeps a bounded, ordered set of changed ids instead of a queue of events.
"""

from __future__ import annotations

import asyncio

DEFAULT_PENDING_LIMIT = 64


class Subscription:
    """One stream's inbox: changed conversation ids, coalesced, oldest dropped first."""

    def __init__(self, *, limit: int = DEFAULT_PENDING_LIMIT) -> None:
        if limit < 1:
            raise ValueError("a subscription must hold at least one pending id")
        self._limit = limit
        # A dict keeps insertion order, so it is an ordered set with O(1) moves.
        self._pending: dict[str, None] = {}
        self._wake = asyncio.Event()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def push(self, key: str) -> None:
        if self._closed:
            return
        self._pending.pop(key, None)
        self._pending[key] = None
        while len(self._pending) > self._limit:
            del self._pending[next(iter(self._pending))]
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    async def next(self, *, max_wait: float) -> list[str] | None:
        """Ids changed since the last call; ``[]`` once ``max_wait`` passes; None when closed."""
        if not self._pending and not self._closed:
            try:
                await asyncio.wait_for(self._wake.wait(), max_wait)
            except TimeoutError:
                return []
        self._wake.clear()
        if self._closed:
            return None
        changed = list(self._pending)
        self._pending.clear()
        return changed


class EventHub:
    """Every live subscription; ``close`` ends them all for shutdown."""

    def __init__(self, *, limit: int = DEFAULT_PENDING_LIMIT) -> None:
        self._limit = limit
        self._subscriptions: set[Subscription] = set()
        self._closed = False
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def subscribers(self) -> int:
        return len(self._subscriptions)

    def subscribe(self) -> Subscription:
        """A new inbox; after ``close`` it comes back already closed."""
        subscription = Subscription(limit=self._limit)
        if self._closed:
            subscription.close()
            return subscription
        self._subscriptions.add(subscription)
        self._idle.clear()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscription.close()
        self._subscriptions.discard(subscription)
        if not self._subscriptions:
            self._idle.set()

    def publish(self, key: str) -> None:
        for subscription in self._subscriptions:
            subscription.push(key)

    async def close(self, *, grace_seconds: float = 1.0) -> None:
        """End every stream, then wait briefly for their handlers to let go."""
        self._closed = True
        for subscription in list(self._subscriptions):
            subscription.close()
        try:
            await asyncio.wait_for(self._idle.wait(), grace_seconds)
        except TimeoutError:
            # The streams are told to end; the server's own shutdown timeout
            # covers a handler stuck in a write, so there is nothing to force.
            return
