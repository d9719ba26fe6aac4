"""Acks first: background work waits while platforms are sending us requests, for a bounded time.

Slack shows a person an error when an interaction is not acked within 3 s,
and Teams does the same for an invoke. Everything an answer owes after its
ack (the resume, its model and tool calls, the message edits) is background
work. On one event loop, background work that runs while requests are
queued delays every one of their acks. So the platform adapters mark each
request a platform waits on, and background work waits until requests have
stopped arriving for ``quiet_seconds``, but never longer than
``max_defer_seconds``. Under a burst the acks stay fast, and the work they
owe starts at most that much later; when traffic is light it starts
``quiet_seconds`` after the ack. The work is durable before the ack (the
spend owes the resume in the store), so waiting loses nothing.

"In progress" is not enough of a signal: a handler that meets no real
suspension (the inline SQLite store) runs start to end in one go, so the
count is back to zero between two requests that were queued together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

DEFAULT_QUIET_SECONDS = 0.02
# Small beside a resume (a model call) and far inside any lease.
DEFAULT_MAX_DEFER_SECONDS = 1.0

_waited_on: ContextVar[bool] = ContextVar("waited_on", default=False)


def waited_on() -> bool:
    """True inside the handling of a request a platform waits on (and what it awaits).

    The SQLite store reads it to leave its periodic checkpoint to a write
    nobody is waiting on.
    """
    return _waited_on.get()


class Foreground:
    """Marks the requests platforms wait on; background work yields to a stream of them."""

    def __init__(
        self,
        *,
        quiet_seconds: float = DEFAULT_QUIET_SECONDS,
        max_defer_seconds: float = DEFAULT_MAX_DEFER_SECONDS,
    ) -> None:
        self.quiet_seconds = quiet_seconds
        self.max_defer_seconds = max_defer_seconds
        self._waiting = 0
        self._last = float("-inf")
        # Set while quiet; created on first use, inside the running loop.
        self._quiet: asyncio.Event | None = None
        self._timer: asyncio.TimerHandle | None = None

    @contextmanager
    def request(self) -> Iterator[None]:
        """Around the handling of one request a platform waits on, up to its response."""
        loop = asyncio.get_running_loop()
        self._waiting += 1
        self._last = loop.time()
        if self._quiet is not None:
            self._quiet.clear()
        marked = _waited_on.set(True)
        try:
            yield
        finally:
            _waited_on.reset(marked)
            self._waiting -= 1
            self._arm(loop)

    async def yield_to(self) -> None:
        """Return once requests have stopped arriving, or after ``max_defer_seconds``.

        Called first thing by background work, which from then on is not
        waited on, even if a request's handler started it (a task inherits
        its creator's context).
        """
        _waited_on.set(False)
        loop = asyncio.get_running_loop()
        if self._is_quiet(loop):
            return
        if self._quiet is None:
            self._quiet = asyncio.Event()
            self._arm(loop)
        try:
            async with asyncio.timeout(self.max_defer_seconds):
                await self._quiet.wait()
        except TimeoutError:
            pass  # a sustained burst: the owed work goes ahead among the acks

    def _is_quiet(self, loop: asyncio.AbstractEventLoop) -> bool:
        return self._waiting == 0 and loop.time() - self._last >= self.quiet_seconds

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        # One timer for every waiter, re-armed while requests keep arriving.
        if self._quiet is None or self._timer is not None:
            return
        delay = max(self._last + self.quiet_seconds - loop.time(), 0.0)
        self._timer = loop.call_later(delay, self._check, loop)

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        if self._quiet is None:
            return
        if self._is_quiet(loop):
            self._quiet.set()
        elif self._waiting == 0:
            self._arm(loop)
        # Else a request is in progress; its end re-arms the timer.
