"""Acks first: background work waits while platforms are sending us requests, for a bounded time.

Slack shows a person an error when an interaction is not acked within 3 s,
and Teams does the same for an invoke. Everything an answer owes after its
ack (the resume, its model and tool calls, the message edits) is background
work. On one event loop, background work that runs while requests are
queued delays every one of their acks. So the platform adapters mark each
request a platform waits on, and background work waits until requests have
stopped arriving for ``quiet_seconds``, but no longer than
``max_defer_seconds``; past that, held work goes ahead one piece at a time
among the requests. Once quiet, held work goes one piece per turn of the
loop, so a request arriving meanwhile (the next wave of a burst, sent when
the last wave's answers were read) stops the rest again rather than queue
behind all of it. Under a burst the acks stay fast, and the work they
owe starts soon after it; when traffic is light it starts
``quiet_seconds`` after the ack. The work is durable before the ack (the
spend owes the resume in the store), so waiting loses nothing.

"In progress" is not enough of a signal: a handler that meets no real
suspension (the inline SQLite store) runs start to end in one go, so the
count is back to zero between two requests that were queued together.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Protocol

from bot.stores.urgency import mark_waited_on, unmark

DEFAULT_QUIET_SECONDS = 0.02
# Small beside a resume (a model call) and far inside any lease.
DEFAULT_MAX_DEFER_SECONDS = 1.0


class Timer(Protocol):
    def when(self) -> float: ...

    def cancel(self) -> None: ...


class Timers(Protocol):
    """The part of an event loop ``Foreground`` keeps time with: the running loop's by default."""

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], object], /) -> Timer: ...


class Foreground:
    """Marks the requests platforms wait on; background work yields to a stream of them."""

    def __init__(
        self,
        *,
        quiet_seconds: float = DEFAULT_QUIET_SECONDS,
        max_defer_seconds: float = DEFAULT_MAX_DEFER_SECONDS,
        timers: Timers | None = None,
    ) -> None:
        self.quiet_seconds = quiet_seconds
        self.max_defer_seconds = max_defer_seconds
        # None: the running loop's clock and timers (a test may pass a fake).
        self._timers = timers
        self._waiting = 0
        self._last = float("-inf")
        # Held background work in arrival order: (when it may wait no longer, its wake-up).
        self._held: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._next_overdue = float("-inf")
        self._timer: Timer | None = None

    @contextmanager
    def request(self) -> Iterator[None]:
        """Around the handling of one request a platform waits on, up to its response."""
        timers = asyncio.get_running_loop() if self._timers is None else self._timers
        self._waiting += 1
        self._last = timers.time()
        marked = mark_waited_on(True)
        try:
            yield
        finally:
            unmark(marked)
            self._waiting -= 1
            self._arm(timers)

    async def yield_to(self) -> None:
        """Return once requests have stopped arriving, or after ``max_defer_seconds``.

        Work held past that goes one at a time, ``quiet_seconds`` apart, while
        requests keep arriving: released all at once, a backlog would hold
        the loop as long as it had waited. Called first thing by background
        work, which from then on is not waited on, even if a request's
        handler started it (a task inherits its creator's context).
        """
        mark_waited_on(False)
        loop = asyncio.get_running_loop()
        timers = loop if self._timers is None else self._timers
        if not self._held and self._is_quiet(timers):
            return  # with work held, behind it
        wake: asyncio.Future[None] = loop.create_future()
        self._held.append((timers.time() + self.max_defer_seconds, wake))
        self._arm(timers)
        await wake

    def _is_quiet(self, timers: Timers) -> bool:
        # The very sum ``_arm`` sets its timer for: ``time - last >= quiet`` can
        # round the other way at that moment, and the timer would fire again and again.
        return self._waiting == 0 and timers.time() >= self._last + self.quiet_seconds

    def _arm(self, timers: Timers) -> None:
        # One timer for all held work: at the next moment that can be quiet, or
        # when the oldest may go ahead anyway.
        if not self._held:
            return
        when = max(self._held[0][0], self._next_overdue)
        if self._waiting == 0:  # else the request in progress re-arms as it ends
            when = min(when, self._last + self.quiet_seconds)
        when = max(when, timers.time())
        if self._timer is not None:
            if self._timer.when() <= when:
                return
            self._timer.cancel()
        self._timer = timers.call_at(when, partial(self._release, timers))

    def _release(self, timers: Timers) -> None:
        self._timer = None
        now = timers.time()
        if self._held and self._is_quiet(timers):
            # One per turn: the timer ``_arm`` sets next is due now, so it fires on
            # the loop's next turn, and a request read meanwhile has begun by then.
            _wake(self._held.popleft()[1])
        elif self._held and self._held[0][0] <= now and self._next_overdue <= now:
            _wake(self._held.popleft()[1])
            self._next_overdue = now + self.quiet_seconds
        self._arm(timers)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # a drain may have cancelled the waiting work
        future.set_result(None)
