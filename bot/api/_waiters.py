"""Long-polls woken by the close itself, never by polling the store.

In this process the lifecycle tells us of each committed write while a
long-poll waits; across
replicas on PostgreSQL, its change feed (LISTEN/NOTIFY) does. Either only
wakes a waiter, which then reads the question: a wake-up that is not a
close costs one read, and a replica that misses a notice still answers
at the end of its wait with the current object.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.questions.write import Written
from bot.stores.ports import Change


def _unobserved() -> None:
    pass


class Waiters:
    """The events of every long-poll in progress, by the run that carries its question.

    ``observe`` is the lifecycle's (``Lifecycle.observe``): the waiters hear of
    this process's writes only while some long-poll waits, so a write with
    nobody waiting (every Slack click, every other surface's step) calls
    nothing here.
    """

    def __init__(
        self, observe: Callable[[Callable[[Written], None]], Callable[[], None]] | None = None
    ) -> None:
        self._events: dict[str, set[asyncio.Event]] = {}
        self._observe = observe
        self._unobserve = _unobserved
        # Set once the server stops: every long-poll answers now, with the current object.
        self.closing = False

    def register(self, run_id: str) -> tuple[asyncio.Event, Callable[[], None]]:
        """A new event set when ``run_id`` next changes, and the call that forgets it."""
        event = asyncio.Event()
        if not self._events and self._observe is not None:
            self._unobserve = self._observe(self.written)
        self._events.setdefault(run_id, set()).add(event)

        def forget() -> None:
            events = self._events.get(run_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._events[run_id]
                    if not self._events:
                        self._unobserve()
                        self._unobserve = _unobserved

        return event, forget

    def close(self) -> None:
        """The server is stopping: wake every waiter (its client polls again elsewhere)."""
        self.closing = True
        for events in self._events.values():
            for event in events:
                event.set()

    def wake(self, run_id: str) -> None:
        for event in self._events.get(run_id, ()):
            event.set()

    def written(self, written: Written) -> None:
        """The lifecycle's observer: a write of ours went through."""
        if written.question is not None and self._events:
            self.wake(written.question.run_id)

    def changed(self, change: Change) -> None:
        """The change feed's subscriber: some replica changed ``change.run_id``."""
        if self._events:
            self.wake(change.run_id)

    def __len__(self) -> int:
        return sum(len(events) for events in self._events.values())
