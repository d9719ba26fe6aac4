"""Posting one signed event to one callback URL, and saying what came of it.

The sender makes one attempt and reports it as a value; the outbox owns
the schedule (``retry_delay``) and the row's id, which is the event's
``webhook-id`` on every attempt. The connection is the sender's own: its
resolver refuses private addresses at connect time, redirects are not
followed, and no proxy from the environment is used.

Attempts run at once, up to ``CONCURRENCY`` in all and ``PER_RECEIVER`` to
one receiver (scheme, host and port): a receiver that never answers holds
its own share until the timeout ends each attempt, and the others go on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from yarl import URL

from bot.webhooks._errors import TargetRefused, WebhookError
from bot.webhooks._events import EventType, event_body
from bot.webhooks._settings import WebhookSettings
from bot.webhooks._signing import signed_headers
from bot.webhooks._targets import PublicResolver, shape_problem

USER_AGENT = "chatops-hitl-bridge-webhooks"
# Attempts in flight at once, to every receiver, and to any one of them.
CONCURRENCY = 32
PER_RECEIVER = 4


@dataclass(frozen=True, slots=True)
class Sent:
    """The receiver answered 2xx: delivered."""

    status: int


@dataclass(frozen=True, slots=True)
class Retry:
    """Not delivered this time (non-2xx, timeout, no connection); worth trying again."""

    reason: str


@dataclass(frozen=True, slots=True)
class Refused:
    """The target may not be reached (a private address, a bad URL); trying again cannot help."""

    reason: str


SendResult = Sent | Retry | Refused

# Given the sender's guarded connector; the session it makes must keep it and use no proxy,
# since a proxy would connect on our behalf where the resolver cannot refuse it.
SessionFactory = Callable[[aiohttp.BaseConnector], aiohttp.ClientSession]


def default_session(connector: aiohttp.BaseConnector) -> aiohttp.ClientSession:
    """A session on the sender's connector that reads no proxy settings from the environment."""
    return aiohttp.ClientSession(connector=connector, trust_env=False)


class WebhookSender:
    """Signs and posts question events; one session, opened on first use, closed by ``close``."""

    def __init__(
        self,
        settings: WebhookSettings,
        *,
        session_factory: SessionFactory = default_session,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if settings.secret is None:
            raise WebhookError("webhooks are off: set BOT_WEBHOOK_SECRET to send them")
        self._secret = settings.secret
        self._allow_private = settings.allow_private
        self._timeout = aiohttp.ClientTimeout(total=settings.timeout_seconds)
        self._seconds = settings.timeout_seconds
        self._session_factory = session_factory
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._all = asyncio.Semaphore(CONCURRENCY)
        # Each receiver's own bound, kept while an attempt to it waits or runs.
        self._receivers: dict[str, tuple[asyncio.Semaphore, int]] = {}

    async def post(
        self,
        url: str,
        *,
        message_id: str,
        kind: EventType,
        data: Mapping[str, Any],
        at: float,
        headers: Mapping[str, str] | None = None,
    ) -> SendResult:
        """One attempt to post the ``kind`` event about ``data`` (closed at ``at``) to ``url``;
        ``headers``: more to send (a ``traceparent``), never one the signature sets."""
        problem = shape_problem(url, allow_private=self._allow_private)
        if problem is not None:
            return Refused(problem)
        body = event_body(kind, data, at=at)
        sent = {
            **(headers or {}),
            **signed_headers(
                self._secret, message_id=message_id, timestamp=self._clock(), body=body
            ),
            "content-type": "application/json",
            "user-agent": USER_AGENT,
        }
        # The reason names the host only: a URL's path or query may carry the receiver's token.
        where = URL(url).host or "the host"
        try:
            async with (
                self._turn(url),
                self._open().post(
                    url, data=body, headers=sent, allow_redirects=False, timeout=self._timeout
                ) as response,
            ):
                status = response.status
        except TimeoutError:
            return Retry(f"{where} did not answer within {self._seconds:g} s.")
        except aiohttp.ClientConnectorError as error:
            if isinstance(error.os_error, TargetRefused):
                return Refused(str(error.os_error))
            return Retry(f"could not connect to {where} ({_short(error.os_error)}).")
        except aiohttp.InvalidURL:
            return Refused("callback_url is not a valid URL; give an absolute http or https URL.")
        except aiohttp.ClientError as error:
            return Retry(f"the request to {where} failed ({type(error).__name__}).")
        if 200 <= status < 300:
            return Sent(status)
        return Retry(f"{where} answered HTTP {status}.")

    async def close(self) -> None:
        """Close the session (and its connections), if one was opened."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    @asynccontextmanager
    async def _turn(self, url: str) -> AsyncIterator[None]:
        """Wait for a free place among the receiver's attempts, then among all of them."""
        parts = URL(url)
        receiver = f"{parts.scheme}://{parts.host}:{parts.port}"
        gate, users = self._receivers.get(receiver) or (asyncio.Semaphore(PER_RECEIVER), 0)
        self._receivers[receiver] = (gate, users + 1)
        try:
            async with gate, self._all:
                yield
        finally:
            gate, users = self._receivers[receiver]
            if users == 1:
                del self._receivers[receiver]
            else:
                self._receivers[receiver] = (gate, users - 1)

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            resolver = None if self._allow_private else PublicResolver()
            connector = aiohttp.TCPConnector(resolver=resolver)
            self._session = self._session_factory(connector)
        return self._session


def _short(error: OSError) -> str:
    return error.strerror or type(error).__name__
