"""Verify a webhook the bridge sent, per Standard Webhooks, by hand.

The signed content is ``{webhook-id}.{webhook-timestamp}.{body}``, signed
with HMAC-SHA256 under the secret's bytes (``whsec_`` then base64); the
``webhook-signature`` header holds one or more space-separated ``v1,<base64>``
signatures, so a secret can be rotated with both in force. A timestamp far
from now is refused, so a captured delivery cannot be replayed later.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping

from pydantic import ValidationError

from bot.client.errors import InvalidWebhook
from bot.contract.models import WebhookEvent

TOLERANCE_SECONDS = 5 * 60
_PREFIX = "whsec_"


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance: float = TOLERANCE_SECONDS,
    now: float | None = None,
) -> WebhookEvent:
    """The event, once its signature and timestamp verify; ``InvalidWebhook`` otherwise.

    Pass the body exactly as received: parsing and re-serialising it would
    change the bytes that were signed.
    """
    key = _key(secret)
    lowered = {name.lower(): value for name, value in headers.items()}
    try:
        msg_id = lowered["webhook-id"]
        stamp = lowered["webhook-timestamp"]
        signatures = lowered["webhook-signature"]
    except KeyError as missing:
        raise InvalidWebhook(f"The webhook has no {missing.args[0]} header.") from None
    # Standard Webhooks headers are ASCII; anything else is no signature of ours, and
    # comparing or encoding it (a server may decode stray bytes as surrogates) would raise.
    named = {"webhook-id": msg_id, "webhook-timestamp": stamp, "webhook-signature": signatures}
    for name, value in named.items():
        if not value.isascii():
            raise InvalidWebhook(f"The {name} header is not ASCII.")
    try:
        sent_at = int(stamp)
    except ValueError:
        raise InvalidWebhook("The webhook-timestamp header is not Unix seconds.") from None
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        raise InvalidWebhook("The webhook's timestamp is too far from now; it may be a replay.")
    raw = body.encode() if isinstance(body, str) else body
    signed = f"{msg_id}.{stamp}.".encode() + raw
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in signatures.split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            break
    else:
        raise InvalidWebhook("No webhook signature matches the secret.")
    try:
        return WebhookEvent.model_validate_json(raw)
    except ValidationError:
        raise InvalidWebhook("The webhook's body is not a question event.") from None


def _key(secret: str) -> bytes:
    # Unpadded base64 is common in secrets; the padding is restored, not required.
    text = secret.removeprefix(_PREFIX).rstrip("=")
    try:
        key = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise InvalidWebhook("The webhook secret is not whsec_ followed by base64.")
    return key
