"""The Bot Framework connector's REST API: post and edit activities, map failures.

Ours rather than the SDK's ``ConnectorClient``: that one sends through
``requests`` in a thread with urllib3 retries built in (it sleeps out a 429's
Retry-After inside the thread, retries 5xx three times on its own, and then
raises without the status code), so neither the outbox nor a person would
learn what happened. Here every call is one HTTP request, and a failure is
a ``DeliveryError`` that says whether and when to try again.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import aiohttp

from bot.service.delivering.surfaces import DeliveryError

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 15.0
UNAUTHORIZED = (
    "Teams refused the bot's credentials (HTTP {status}); check that MicrosoftAppId, "
    "MicrosoftAppPassword and MicrosoftAppTenantId match the Azure Bot registration."
)
FORBIDDEN = (
    "Teams did not let the bot post here (HTTP 403); the app may have been removed from "
    "this chat or team, so add it again (or check the tenant's app policies)."
)
NOT_FOUND = (
    "Teams does not know this conversation or message (HTTP 404); it may have been "
    "deleted, so start the run again."
)
TOO_LARGE = (
    "Teams refused the card as too large (HTTP 413, MessageSizeTooBig), so it was not "
    "posted; the bridge draws cards under Teams' limit, so please report this as a bug."
)
REJECTED = "Teams rejected the message (HTTP {status}): {detail}"
THROTTLED = "Teams is throttling the bot (HTTP 429); retry after {after:g} s."
UNAVAILABLE = "The Teams connector failed (HTTP {status}); retry later."
UNREACHABLE = "The Teams connector could not be reached ({error}); retry later."

TokenSource = Callable[[], Awaitable[str | None]]


class Connector:
    """One HTTP session for every call to every service URL."""

    def __init__(self, *, token: TokenSource, timeout: float = TIMEOUT_SECONDS) -> None:
        self._token = token
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def send(self, service_url: str, conversation_id: str, activity: dict[str, Any]) -> str:
        """Post a new activity; its id, to edit it later."""
        url = f"{_base(service_url)}/v3/conversations/{quote(conversation_id, safe='')}/activities"
        body = await self._call("POST", url, activity)
        return str(body.get("id", ""))

    async def update(
        self, service_url: str, conversation_id: str, activity_id: str, activity: dict[str, Any]
    ) -> None:
        """Replace a posted activity (a card) for everyone in the conversation."""
        url = (
            f"{_base(service_url)}/v3/conversations/{quote(conversation_id, safe='')}"
            f"/activities/{quote(activity_id, safe='')}"
        )
        await self._call("PUT", url, {**activity, "id": activity_id})

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _call(self, method: str, url: str, activity: dict[str, Any]) -> dict[str, Any]:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        headers = {}
        token = await self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            async with self._session.request(method, url, json=activity, headers=headers) as reply:
                if reply.status < 300:
                    body = await reply.json(content_type=None) if reply.content_length != 0 else {}
                    return body if isinstance(body, dict) else {}
                detail = (await reply.text())[:200]
                raise delivery_error(reply.status, reply.headers.get("Retry-After"), detail)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise DeliveryError(UNREACHABLE.format(error=type(error).__name__)) from None


def delivery_error(status: int, retry_after: str | None, detail: str = "") -> DeliveryError:
    """A connector status as a DeliveryError: retry when, or permanent with the fix."""
    if status == 429:
        after = parse_retry_after(retry_after) or 1.0
        return DeliveryError(THROTTLED.format(after=after), retry_after=after)
    if status >= 500:
        return DeliveryError(
            UNAVAILABLE.format(status=status), retry_after=parse_retry_after(retry_after)
        )
    if status == 401:
        return DeliveryError(UNAUTHORIZED.format(status=status), permanent=True)
    if status == 403:
        return DeliveryError(FORBIDDEN, permanent=True)
    if status == 404:
        return DeliveryError(NOT_FOUND, permanent=True)
    if status == 413:
        # Our cards are drawn under the limit, so this is a bug to report, not to retry.
        return DeliveryError(TOO_LARGE, permanent=True)
    return DeliveryError(
        REJECTED.format(status=status, detail=detail or "no detail"), permanent=True
    )


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (delta-seconds or an HTTP date), never negative."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(moment.timestamp() - time.time(), 0.0)


async def with_retries(
    work: Callable[[], Awaitable[Any]], *, attempts: int, max_wait: float
) -> Any:
    """Run ``work``, retrying transient DeliveryErrors no sooner than Retry-After.

    The surface makes one attempt by default and leaves retries to the
    outbox; a deployment asking for more in place stays bounded in count
    and in wait, so a surface call never hangs a delivery pass for long.
    """
    for attempt in range(1, attempts + 1):
        try:
            return await work()
        except DeliveryError as error:
            if error.permanent or attempt == attempts:
                raise
            wait = error.retry_after if error.retry_after is not None else 0.5 * 2**attempt
            if wait > max_wait:
                raise
            log.warning("Teams delivery failed, retrying in %.1f s: %s", wait, error.reason)
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")


def _base(service_url: str) -> str:
    return service_url.rstrip("/")
