"""The journal port, and what a running tool call can learn about itself.

Each finished step of a turn (a model reply with the call ids the kernel
reserved for it, a tool's result) is written to the journal before the turn
goes on. A replay after a crash reads the journal first, so a finished step
is never taken twice: the model is not asked again for a round it answered,
and a tool that returned is not dispatched again. The one step that can run
twice is a tool call that was in flight when the process died; it runs again
with the same idempotency key, which the tool reads from ``current_call()``
and hands to whatever it changes (a deploy API, a ticket system).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol


class Journal(Protocol):
    """Finished steps per run; the turn loop relies on it to never repeat one."""

    async def steps(self, run_id: str) -> Mapping[str, Any]:
        """Every step recorded for the run, by step name."""
        ...

    async def record(self, run_id: str, step: str, value: Any) -> None:
        """Record a finished step. The first record of a step wins; later ones are ignored."""
        ...


class NoJournal:
    """Remembers nothing: every step runs (tests and one-shot turns)."""

    async def steps(self, run_id: str) -> Mapping[str, Any]:
        del run_id
        return {}

    async def record(self, run_id: str, step: str, value: Any) -> None:
        del run_id, step, value


def model_step(round_number: int) -> str:
    return f"model:{round_number}"


def tool_step(call_id: str) -> str:
    return f"tool:{call_id}"


def idempotency_key(run_id: str, call_id: str) -> str:
    """Stable for one call of one run, whichever process dispatches it and how often."""
    return hashlib.sha256(f"{run_id}\x00{call_id}".encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class CallContext:
    """The tool call being dispatched right now."""

    run_id: str
    call_id: str
    tool: str

    @property
    def idempotency_key(self) -> str:
        return idempotency_key(self.run_id, self.call_id)


_current_call: ContextVar[CallContext | None] = ContextVar("current_call", default=None)


def current_call() -> CallContext | None:
    """The call a tool body is running for; None outside a dispatch."""
    return _current_call.get()


@contextmanager
def dispatching(context: CallContext) -> Iterator[None]:
    token = _current_call.set(context)
    try:
        yield
    finally:
        _current_call.reset(token)
