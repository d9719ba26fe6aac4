"""One attempt to a real loopback receiver: Sent, Retry or Refused, never the secret in a log."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

import pytest
from pydantic import SecretStr

from bot.webhooks import (
    Refused,
    Retry,
    Sent,
    WebhookError,
    WebhookSender,
    WebhookSettings,
)
from tests.webhooks.conftest import Receiver

DATA = {"id": "q_1", "status": "answered", "answer": {"decision": "approve"}}
SenderFactory = Callable[..., WebhookSender]


@pytest.fixture
async def make_sender(settings: WebhookSettings) -> AsyncIterator[SenderFactory]:
    made: list[WebhookSender] = []

    def make(**overrides: object) -> WebhookSender:
        given = {"BOT_WEBHOOK_SECRET": settings.secret, "BOT_WEBHOOK_ALLOW_PRIVATE": True}
        sender = WebhookSender(WebhookSettings(**{**given, **overrides}))
        made.append(sender)
        return sender

    yield make
    for sender in made:
        await sender.close()


async def post(sender: WebhookSender, url: str, *, message_id: str = "delivery-7") -> object:
    return await sender.post(
        url, message_id=message_id, kind="question.answered", data=DATA, at=1_700_000_000
    )


async def test_a_2xx_is_sent_and_the_package_verifies_the_event(
    receiver: Receiver, make_sender: SenderFactory
) -> None:
    receiver.statuses = [204]
    assert await post(make_sender(), receiver.url()) == Sent(204)
    [got] = receiver.received
    assert got.verified == {
        "type": "question.answered",
        "timestamp": "2023-11-14T22:13:20.000Z",
        "data": DATA,
    }
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["webhook-id"] == "delivery-7"


async def test_a_500_then_a_200_is_retry_then_sent_under_one_webhook_id(
    receiver: Receiver, make_sender: SenderFactory
) -> None:
    receiver.statuses = [500, 200]
    sender = make_sender()
    first = await post(sender, receiver.url())
    assert first == Retry("127.0.0.1 answered HTTP 500.")
    assert await post(sender, receiver.url()) == Sent(200)
    assert [got.headers["webhook-id"] for got in receiver.received] == ["delivery-7"] * 2
    first_body, second_body = (got.body for got in receiver.received)
    assert first_body == second_body
    assert all(isinstance(got.verified, dict) for got in receiver.received)


@pytest.mark.parametrize("status", [301, 302, 400, 404, 429, 503])
async def test_any_other_status_is_a_retry_and_a_redirect_is_not_followed(
    receiver: Receiver, make_sender: SenderFactory, status: int
) -> None:
    receiver.statuses = [status]
    result = await post(make_sender(), receiver.url())
    assert result == Retry(f"127.0.0.1 answered HTTP {status}.")
    assert len(receiver.received) == 1


async def test_a_receiver_that_does_not_answer_in_time_is_a_retry(
    receiver: Receiver, make_sender: SenderFactory
) -> None:
    receiver.hang = True
    result = await post(make_sender(BOT_WEBHOOK_TIMEOUT_SECONDS=0.2), receiver.url())
    assert result == Retry("127.0.0.1 did not answer within 0.2 s.")
    assert len(receiver.received) == 1


async def test_a_closed_port_is_a_retry(receiver: Receiver, make_sender: SenderFactory) -> None:
    sender = make_sender()
    url = receiver.url()
    receiver.port = 1  # nothing listens on port 1 here
    result = await post(sender, receiver.url())
    assert isinstance(result, Retry) and result.reason.startswith("could not connect to 127.0.0.1")
    assert url != receiver.url()


@pytest.mark.parametrize("host", ["127.0.0.1", "[::ffff:127.0.0.1]", "localhost"])
async def test_a_private_target_is_refused_at_send_time_and_never_contacted(
    receiver: Receiver, make_sender: SenderFactory, host: str
) -> None:
    """``localhost`` passes the shape check and is refused by the connect-time resolver."""
    result = await post(make_sender(BOT_WEBHOOK_ALLOW_PRIVATE=False), receiver.url(host))
    assert isinstance(result, Refused)
    assert "is a loopback, private or otherwise non-public address" in result.reason
    assert receiver.received == []


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/hooks", "http://user:pw@127.0.0.1/hooks", "http://2130706433/"]
)
async def test_a_malformed_target_is_refused_even_with_private_allowed(
    make_sender: SenderFactory, url: str
) -> None:
    assert isinstance(await post(make_sender(), url), Refused)


async def test_the_secret_and_signature_never_reach_a_log_or_a_reason(
    receiver: Receiver,
    make_sender: SenderFactory,
    secret: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    receiver.statuses = [500, 200]
    sender = make_sender()
    reasons = [await post(sender, receiver.url()), await post(sender, receiver.url())]
    reasons.append(await post(make_sender(BOT_WEBHOOK_TIMEOUT_SECONDS=0.2), receiver.url()))
    receiver.hang = True
    reasons.append(await post(make_sender(BOT_WEBHOOK_TIMEOUT_SECONDS=0.2), receiver.url()))
    told = caplog.text + repr(reasons)
    signatures = [got.headers["webhook-signature"].partition(",")[2] for got in receiver.received]
    assert len(signatures) == 4
    for hidden in [secret, secret.removeprefix("whsec_"), *signatures]:
        assert hidden not in told
    # Neither the receiver's token in the query nor the body is repeated in a reason.
    assert "receiver-token" not in told and "approve" not in told
    assert secret not in repr(sender.__dict__)


async def test_a_sender_without_a_secret_is_refused() -> None:
    with pytest.raises(WebhookError, match="set BOT_WEBHOOK_SECRET"):
        WebhookSender(WebhookSettings())


def test_the_settings_secret_is_a_secret_str(settings: WebhookSettings, secret: str) -> None:
    assert isinstance(settings.secret, SecretStr)
    assert settings.secret.get_secret_value() == secret


async def test_the_session_factory_gets_the_senders_connector_once(
    receiver: Receiver, settings: WebhookSettings
) -> None:
    """One session serves every attempt; the factory cannot swap the guarded connector out."""
    import aiohttp

    connectors: list[aiohttp.BaseConnector] = []

    def factory(connector: aiohttp.BaseConnector) -> aiohttp.ClientSession:
        connectors.append(connector)
        return aiohttp.ClientSession(connector=connector)

    sender = WebhookSender(settings, session_factory=factory, clock=lambda: 1_700_000_000.9)
    try:
        assert await post(sender, receiver.url()) == Sent(200)
        assert await post(sender, receiver.url()) == Sent(200)
    finally:
        await sender.close()
    assert len(connectors) == 1 and connectors[0].closed
    # The clock gives the header's timestamp, in whole seconds.
    assert [got.headers["webhook-timestamp"] for got in receiver.received] == ["1700000000"] * 2
