"""The body and headers: compact JSON, signed so that the standardwebhooks package verifies it."""

from __future__ import annotations

import json
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from bot.webhooks import EVENT_TYPES, WebhookError, event_body, rfc3339, signed_headers


def test_the_body_is_compact_json_with_type_rfc3339_timestamp_and_data() -> None:
    body = event_body("question.answered", {"id": "q_1", "answer": {"é": [1, 2]}}, at=1.5)
    assert body == (
        b'{"type":"question.answered","timestamp":"1970-01-01T00:00:01.500Z",'
        b'"data":{"id":"q_1","answer":{"\xc3\xa9":[1,2]}}}'
    )


def test_every_close_has_its_event_type_and_nothing_else_is_one() -> None:
    assert EVENT_TYPES == ("question.answered", "question.expired", "question.cancelled")
    for kind in EVENT_TYPES:
        assert json.loads(event_body(kind, {}, at=0))["type"] == kind
    with pytest.raises(WebhookError, match=r"question\.closed.*is not a webhook event"):
        event_body("question.closed", {}, at=0)  # type: ignore[arg-type]


def test_a_value_json_cannot_carry_is_refused() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        event_body("question.answered", {"score": float("nan")}, at=0)


def test_rfc3339_is_utc_with_a_z() -> None:
    assert rfc3339(1_700_000_000) == "2023-11-14T22:13:20.000Z"


def test_the_standardwebhooks_package_verifies_what_we_sign(secret: str) -> None:
    """Verified by the package's own verifier, not by our signer."""
    body = event_body("question.expired", {"id": "q_9"}, at=time.time())
    now = time.time()
    headers = signed_headers(secret, message_id="msg_42", timestamp=now, body=body)
    assert set(headers) == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert headers["webhook-id"] == "msg_42"
    assert headers["webhook-timestamp"] == str(int(now))
    version, _, signature = headers["webhook-signature"].partition(",")
    assert version == "v1" and len(signature) == 44  # base64 of a 32-byte HMAC-SHA256
    assert Webhook(secret).verify(body, headers) == json.loads(body)


def test_a_changed_body_or_another_secret_fails_verification(secret: str) -> None:
    from bot.webhooks import random_webhook_secret

    body = event_body("question.cancelled", {"id": "q_1"}, at=0)
    headers = signed_headers(secret, message_id="m1", timestamp=time.time(), body=body)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body.replace(b"q_1", b"q_2"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(random_webhook_secret()).verify(body, headers)


@pytest.mark.parametrize("message_id", ["", "line\nbreak", "naïve"])
def test_an_id_that_cannot_be_a_header_is_refused(secret: str, message_id: str) -> None:
    with pytest.raises(WebhookError, match="printable ASCII"):
        signed_headers(secret, message_id=message_id, timestamp=0, body=b"{}")


def test_a_malformed_secret_is_refused_without_repeating_it() -> None:
    with pytest.raises(WebhookError) as raised:
        signed_headers("whsec_dG9vLXNob3J0", message_id="m", timestamp=0, body=b"{}")
    assert "dG9vLXNob3J0" not in str(raised.value)
