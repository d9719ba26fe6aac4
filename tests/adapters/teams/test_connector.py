"""Connector failures: 429/5xx retried after Retry-After; 401/403 permanent, with the fix."""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator

import pytest

from adapters.teams._connector import (
    TOO_LARGE,
    Connector,
    delivery_error,
    parse_retry_after,
    with_retries,
)
from bot.service.delivering.surfaces import DeliveryError
from tests.fakes.bf_connector import MAX_MESSAGE_BYTES, FakeConnector


@pytest.fixture
async def fake() -> AsyncIterator[FakeConnector]:
    connector = await FakeConnector().start()
    yield connector
    await connector.close()


def test_statuses_map_to_retry_or_permanent() -> None:
    """429 and 5xx: retry (after Retry-After); 401/403/404: permanent, with what to fix."""
    throttled = delivery_error(429, "7")
    assert (throttled.permanent, throttled.retry_after) == (False, 7.0)
    assert delivery_error(503, None).permanent is False
    assert delivery_error(502, "3").retry_after == 3.0
    unauthorized = delivery_error(401, None)
    assert unauthorized.permanent and "MicrosoftAppPassword" in unauthorized.reason
    forbidden = delivery_error(403, None)
    assert forbidden.permanent and "add it again" in forbidden.reason
    assert delivery_error(404, None).permanent
    assert delivery_error(400, None, "bad card").reason.endswith("bad card")


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    seconds = parse_retry_after(later)
    assert seconds is not None and 100 < seconds <= 120


async def test_retries_wait_what_the_platform_asked_and_stop_on_permanent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Waits are Retry-After's; a permanent failure is not retried; attempts are bounded."""
    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("adapters.teams._connector.asyncio.sleep", no_sleep)
    failures = [delivery_error(429, "4"), delivery_error(503, None)]

    async def flaky() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    assert await with_retries(flaky, attempts=3, max_wait=30) == "ok"
    assert waits == [4.0, 2.0]

    calls = 0

    async def refused() -> None:
        nonlocal calls
        calls += 1
        raise delivery_error(401, None)

    with pytest.raises(DeliveryError) as raised:
        await with_retries(refused, attempts=3, max_wait=30)
    assert raised.value.permanent and calls == 1

    async def too_long() -> None:
        raise delivery_error(429, "3600")

    with pytest.raises(DeliveryError):
        await with_retries(too_long, attempts=3, max_wait=30)
    assert waits == [4.0, 2.0]


async def test_the_client_posts_updates_and_maps_a_401(fake: FakeConnector) -> None:
    """Against the loopback connector: ids come back, a PUT edits, a 401 is permanent."""

    async def token() -> str | None:
        return "bot-token"

    client = Connector(token=token)
    try:
        conversation = "19:abc@thread.tacv2;messageid=1"
        activity_id = await client.send(fake.url, conversation, {"type": "message", "text": "hi"})
        await client.update(fake.url, conversation, activity_id, {"type": "message", "text": "x"})
        assert fake.activities[(conversation, activity_id)]["text"] == "x"
        assert {c.authorization for c in fake.calls} == {"Bearer bot-token"}
        fake.fail_next(401)
        with pytest.raises(DeliveryError) as raised:
            await client.send(fake.url, conversation, {"type": "message"})
        assert raised.value.permanent
    finally:
        await client.close()


async def test_an_oversized_activity_is_refused_as_teams_refuses_it() -> None:
    """Over 28 KB the fake answers 413 MessageSizeTooBig, as Teams does: a permanent
    DeliveryError that says so, not a retry."""
    fake = await FakeConnector().start()
    client = Connector(token=_no_token)
    try:
        big = {"type": "message", "text": "x" * MAX_MESSAGE_BYTES}
        with pytest.raises(DeliveryError) as raised:
            await client.send(fake.url, "a:1", big)
        assert raised.value.permanent and raised.value.reason == TOO_LARGE
        (call,) = fake.calls
        assert call.status == 413
        assert await client.send(fake.url, "a:1", {"type": "message", "text": "x"})
    finally:
        await client.close()
        await fake.close()


async def _no_token() -> str | None:
    return None
