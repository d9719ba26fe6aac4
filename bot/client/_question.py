"""``Question``: the handle on an asked question, whose ``wait`` outlasts restarts."""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Callable
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from bot.client._http import TRANSIENT_STATUSES
from bot.client.errors import (
    ApiError,
    BridgeError,
    Cancelled,
    Expired,
    RateLimited,
    TransportError,
    WaitTimeout,
)
from bot.contract.models import QuestionObject

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MAX_WAIT_SLICE = 30
# How long a waiter keeps retrying an unreachable bridge past the question's
# own expiry when the caller set no deadline: by then the bridge, once back,
# answers "expired" at once, so longer would wait on nothing.
EXPIRY_GRACE_SECONDS = 300.0
_FIRST_BACKOFF = 0.2
_MAX_BACKOFF = 2.0


class Poller(Protocol):
    """What a ``Question`` asks of its client; ``Bridge`` provides it."""

    async def get(self, interrupt_id: str) -> QuestionObject: ...

    async def cancel(self, interrupt_id: str, reason: str = "") -> QuestionObject: ...

    async def poll(self, interrupt_id: str, wait: int) -> QuestionObject: ...


def identity(question: QuestionObject) -> QuestionObject:
    return question


def into(model: type[M]) -> Callable[[QuestionObject], M]:
    def parse(question: QuestionObject) -> M:
        if question.status == "answered":
            # The caller's own model of the form's object reads the answer's JSON as sent.
            return model.model_validate(question.answer or {})
        raise outcome_error(question)

    return parse


def outcome_error(question: QuestionObject) -> BridgeError:
    """The error saying how a question closed without the answer a caller needed."""
    if question.status == "expired":
        return Expired("Nobody answered the question before it expired.", question=question)
    if question.status == "cancelled":
        return Cancelled(question.cancel_reason or "", question=question)
    return BridgeError(f"The question is {question.status}.")


class Question(Generic[T]):
    """A question asked; ``wait`` returns what its parser makes of the closed object.

    ``ask``, ``approve`` and ``form(schema=...)`` give a ``Question[QuestionObject]``:
    ``wait`` returns the closed object whatever the outcome (answered, expired
    or cancelled), and the caller reads ``status`` and ``answer``.
    ``form(model=M)`` gives a ``Question[M]``: ``wait`` returns the answer as a
    validated ``M``, and raises ``Expired`` or ``Cancelled`` when there is none.
    """

    def __init__(
        self, bridge: Poller, question: QuestionObject, parse: Callable[[QuestionObject], T]
    ) -> None:
        self._bridge = bridge
        self._object = question
        self._parse = parse
        # Only the 201 that created the question carries them: kept here past every refresh.
        self._links = dict(question.links or {})

    def __repr__(self) -> str:
        return f"Question({self.id!r}, status={self._object.status!r})"

    @property
    def id(self) -> str:
        return self._object.id

    @property
    def object(self) -> QuestionObject:
        """The question as last seen."""
        return self._object

    @property
    def links(self) -> dict[str, str]:
        """The answer link of each ``link:<id>`` answerer, by id, when this handle created
        the question (a route ``link:<id>``); empty for one found again by its key."""
        return dict(self._links)

    async def refresh(self) -> QuestionObject:
        self._object = await self._bridge.get(self.id)
        return self._object

    async def cancel(self, reason: str = "") -> QuestionObject:
        self._object = await self._bridge.cancel(self.id, reason)
        return self._object

    # The contract's name: a deadline across many polls and retries, not one call's.
    async def wait(self, timeout: float | None = None) -> T:  # noqa: ASYNC109
        """Long-poll until the question closes; ``WaitTimeout`` after ``timeout`` seconds.

        The bridge holds each poll for up to thirty seconds. A bridge that
        restarts or is briefly unreachable is retried with a short backoff
        until the deadline (or, with none, until a while past the question's
        expiry), so a wait spans a restart and still returns the answer.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        backoff = _FIRST_BACKOFF
        polled = False
        while not self._object.closed:
            remaining = math.inf if deadline is None else deadline - loop.time()
            if remaining <= 0 and polled:
                raise WaitTimeout(
                    f"Question {self.id} is still open after {timeout} seconds.",
                    question=self._object,
                )
            # Whole seconds for the bridge, while the deadline itself cuts the
            # last slice short: no spinning on wait=0 polls near the end.
            if remaining <= 0:
                slice_seconds = 0
            elif remaining >= MAX_WAIT_SLICE:
                slice_seconds = MAX_WAIT_SLICE
            else:
                slice_seconds = math.ceil(remaining)
            limit = None if deadline is None or slice_seconds == 0 else remaining
            try:
                async with asyncio.timeout(limit):
                    self._object = await self._bridge.poll(self.id, slice_seconds)
                backoff = _FIRST_BACKOFF
            except TimeoutError:
                polled = True
                continue
            except (TransportError, RateLimited, ApiError) as exc:
                if not transient(exc) or not self._may_retry(deadline, loop.time()):
                    raise
                # Jitter, not a secret: spreads many waiters' retries after a restart.
                pause = min(backoff, _MAX_BACKOFF) * (0.5 + random.random() / 2)  # noqa: S311
                if isinstance(exc, RateLimited) and exc.retry_after is not None:
                    pause = max(pause, exc.retry_after)  # sooner would be refused again
                if deadline is not None:
                    pause = min(pause, max(deadline - loop.time(), 0))
                await asyncio.sleep(pause)
                backoff *= 2
            polled = True
        return self._parse(self._object)

    def _may_retry(self, deadline: float | None, now: float) -> bool:
        if deadline is not None:
            return now < deadline
        expires = datetime.fromisoformat(self._object.expires_at.replace("Z", "+00:00"))
        return time.time() < expires.timestamp() + EXPIRY_GRACE_SECONDS


def transient(exc: BridgeError) -> bool:
    """Whether ``exc`` says the bridge is out of reach for now, so a retry may succeed."""
    if isinstance(exc, TransportError | RateLimited):
        return True
    return isinstance(exc, ApiError) and exc.status in TRANSIENT_STATUSES
