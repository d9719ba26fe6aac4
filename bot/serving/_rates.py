"""Rate limits: how many hits one identity (an API key, a client address) makes a minute.

A sliding window counter, as the ``limits`` package (PyPI) defines it: a
counter per identity per fixed window, and the previous window's count
weighed by how much of it the sliding window still covers. ``limits`` keeps
the counters (its in-memory storage: thread-safe, expired and dropped on its
own) and names their windows; it reads the wall clock inside its strategies
and takes no clock of its own, so the weighing is done here at the instant
of the clock given, which a test moves instead of sleeping.

The counts are per process, in memory: each replica of a deployment counts
on its own (docs/api.md says so), and a restart forgets them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from aiohttp import web
from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage

from bot.errors import BotError

_MINUTE = RateLimitItemPerMinute(1).get_expiry()


class Throttled(BotError):
    """Refused for going over a rate limit; ``retry_after`` whole seconds until one more fits."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"over the rate limit; retry after {retry_after} s")
        self.retry_after = retry_after


class RateLimits:
    """Per-identity counts in a sliding minute under one name (``creates``, ``sign-in``)."""

    def __init__(self, name: str, *, clock: Callable[[], float] = time.time) -> None:
        self._name = name
        self._clock = clock
        self._storage = MemoryStorage()

    def hit(self, identity: str, *, per_minute: int) -> int:
        """Count one hit and return 0 if it fits in ``per_minute``; else, counting nothing,
        the whole seconds until one would (a refused hit must not push the wait out)."""
        current_key, wait = self._look(identity, per_minute)
        if wait == 0:
            # limits keeps a window's counter for two windows: it is the previous
            # window's count for the whole of the next.
            self._storage.incr(current_key, 2 * _MINUTE)
        return wait

    def retry_after(self, identity: str, *, per_minute: int) -> int:
        """0 if one more hit would fit; else the whole seconds until it would. Counts nothing."""
        return self._look(identity, per_minute)[1]

    def _look(self, identity: str, limit: int) -> tuple[str, int]:
        """The current window's counter key, and the wait (0: one more fits now)."""
        key = RateLimitItemPerMinute(limit, namespace=self._name).key_for(identity)
        now = self._clock()
        previous_key, current_key = MemoryStorage.sliding_window_keys(key, _MINUTE, now)
        previous = self._storage.get(previous_key)
        current = self._storage.get(current_key)
        into = now % _MINUTE
        # limits' own test: the weighted count, rounded down, leaves room for one more.
        if math.floor(previous * (_MINUTE - into) / _MINUTE + current) + 1 <= limit:
            return current_key, 0
        if current < limit:
            # Room comes within this window, once enough of the previous one slides out.
            wait = _MINUTE - (limit - current) * _MINUTE / previous - into
        else:
            # Not before the next window, once enough of this one has slid out too.
            wait = _MINUTE - into + max(0.0, _MINUTE - limit * _MINUTE / current)
        # Just past the instant the weighted count drops below the limit; never 0.
        return current_key, math.floor(wait) + 1


def client_of(request: web.Request) -> str:
    """Who a per-address limit counts: the TCP peer's address.

    No ``X-Forwarded-For`` is believed, since any client can send one; behind
    a reverse proxy every request is the proxy's, and shares its limits.
    """
    return request.remote or ""
