"""verify_webhook against what the standardwebhooks package signs."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook

from bot.client import InvalidWebhook, verify_webhook

SECRET = "whsec_" + base64.b64encode(b"a webhook secret of 32 bytes....").decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"another secret, also 32 bytes...").decode()
QUESTION = {
    "id": "q_1",
    "kind": "ask_user",
    "status": "expired",
    "payload": {"questions": [{"question": "Ship?"}]},
    "route": {"surface": "console", "conversation": "ops"},
    "answerers": ["anyone"],
    "created_at": "2026-12-01T17:00:00Z",
    "expires_at": "2026-12-01T17:01:00Z",
    "closed_at": "2026-12-01T17:01:00Z",
    "delivery": {"status": "posted"},
    "idempotency_key": "k1",
}
Tamper = Callable[[dict[str, str], str], tuple[dict[str, str], str]]
BODY = json.dumps(
    {"type": "question.expired", "timestamp": "2026-12-01T17:01:00Z", "data": QUESTION}
)


def _signed(
    body: str = BODY, *, secret: str = SECRET, at: datetime | None = None
) -> dict[str, str]:
    moment = at or datetime.now(UTC)
    signature = Webhook(secret).sign("msg_1", moment, body)
    return {
        "Webhook-Id": "msg_1",
        "Webhook-Timestamp": str(int(moment.timestamp())),
        "Webhook-Signature": signature,
    }


def test_an_event_signed_by_the_reference_package_verifies() -> None:
    """The reference signer's headers and body verify and parse into the event."""
    event = verify_webhook(SECRET, _signed(), BODY.encode())
    assert event.type == "question.expired"
    assert event.data.id == "q_1"
    assert verify_webhook(SECRET, _signed(), BODY).data.status == "expired"


def test_one_of_several_signatures_suffices() -> None:
    """During a secret rotation the header carries both; either verifies."""
    headers = _signed()
    rotated = _signed(secret=OTHER_SECRET)["Webhook-Signature"]
    headers["Webhook-Signature"] = f"{rotated} {headers['Webhook-Signature']}"
    assert verify_webhook(SECRET, headers, BODY).data.id == "q_1"
    assert verify_webhook(OTHER_SECRET, headers, BODY).data.id == "q_1"


def test_our_verifier_agrees_with_the_reference_one() -> None:
    """What the reference verifier accepts we accept, and its refusals are ours."""
    headers = _signed()
    lowered = {k.lower(): v for k, v in headers.items()}
    assert Webhook(SECRET).verify(BODY, lowered)["data"]["id"] == "q_1"
    assert verify_webhook(SECRET, headers, BODY).data.id == "q_1"


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (lambda h, b: (h, b.replace("expired", "answered", 1)), "signature"),
        (lambda h, b: ({**h, "Webhook-Id": "msg_2"}, b), "signature"),
        (
            lambda h, b: ({**h, "Webhook-Timestamp": str(int(h["Webhook-Timestamp"]) + 1)}, b),
            "signature",
        ),
        (
            lambda h, b: ({**h, "Webhook-Signature": "v2," + h["Webhook-Signature"][3:]}, b),
            "signature",
        ),
        (
            lambda h, b: ({k: v for k, v in h.items() if k != "Webhook-Signature"}, b),
            "webhook-signature",
        ),
        (lambda h, b: ({**h, "Webhook-Timestamp": "soon"}, b), "Unix seconds"),
    ],
)
def test_tampered_events_are_refused(tamper: Tamper, says: str) -> None:
    """A changed body, id, timestamp or signature version does not verify."""
    headers, body = tamper(_signed(), BODY)
    with pytest.raises(InvalidWebhook, match=says):
        verify_webhook(SECRET, headers, body)


def test_the_wrong_secret_does_not_verify() -> None:
    """Signed under another secret, the event is refused."""
    with pytest.raises(InvalidWebhook, match="signature"):
        verify_webhook(OTHER_SECRET, _signed(), BODY)


@pytest.mark.parametrize("skew", [timedelta(minutes=-6), timedelta(minutes=6)])
def test_a_timestamp_outside_five_minutes_is_refused(skew: timedelta) -> None:
    """A correctly signed but old (or future) delivery may be a replay."""
    headers = _signed(at=datetime.now(UTC) + skew)
    with pytest.raises(InvalidWebhook, match="too far from now"):
        verify_webhook(SECRET, headers, BODY)
    assert verify_webhook(SECRET, headers, BODY, now=int(headers["Webhook-Timestamp"])).data


def test_a_signed_body_that_is_no_event_is_refused() -> None:
    """Even a valid signature does not make arbitrary JSON an event."""
    body = json.dumps({"type": "question.answered"})
    with pytest.raises(InvalidWebhook, match="not a question event"):
        verify_webhook(SECRET, _signed(body), body)


def test_a_malformed_secret_is_said_so() -> None:
    """A secret that is not base64 is named as the problem, not the signature."""
    with pytest.raises(InvalidWebhook, match="whsec_"):
        verify_webhook("whsec_!!!", _signed(), BODY)


@pytest.mark.parametrize("header", ["Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"])
@pytest.mark.parametrize("stray", ["é", "\udcff", "\u0661"])
def test_a_header_that_is_not_ascii_is_refused_by_name(header: str, stray: str) -> None:
    """Non-ASCII text (a server's surrogate for an undecodable byte too, or a digit of another
    script) in any signed header is refused naming the header, never a TypeError."""
    headers = _signed()
    headers[header] = headers[header] + stray
    with pytest.raises(InvalidWebhook, match=f"The {header.lower()} header is not ASCII."):
        verify_webhook(SECRET, headers, BODY)
