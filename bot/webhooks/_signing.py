"""Standard Webhooks signatures, made by the ``standardwebhooks`` package.

The package is the specification's own implementation, so what we send is
what every receiver's library verifies; this module only shapes headers.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import SecretStr
from standardwebhooks.webhooks import Webhook

from bot.webhooks._errors import WebhookError
from bot.webhooks._settings import webhook_key


def signed_headers(
    secret: SecretStr | str, *, message_id: str, timestamp: float, body: bytes
) -> dict[str, str]:
    """``webhook-id``, ``webhook-timestamp`` (Unix seconds) and ``webhook-signature``.

    ``timestamp`` is when this attempt is sent (receivers refuse old ones),
    so each attempt of one message is signed anew under the same id.
    """
    text = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
    if webhook_key(text) is None:
        raise WebhookError("the webhook secret is malformed; check BOT_WEBHOOK_SECRET")
    if not message_id or not message_id.isascii() or not message_id.isprintable():
        raise WebhookError("a webhook id is printable ASCII and not empty; pass a stable row id")
    whole = int(timestamp)  # the header is whole seconds, and the signature signs the header
    signature = Webhook(text).sign(
        msg_id=message_id, timestamp=datetime.fromtimestamp(whole, UTC), data=body.decode()
    )
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(whole),
        "webhook-signature": signature,
    }
