"""Signed webhooks: the event a callback URL receives when its question closes.

This package builds the body (``event_body``), signs it per Standard
Webhooks (``signed_headers``), decides whether a URL may be a target
(``check_target``, against SSRF), spaces the attempts (``retry_delay``)
and makes one attempt (``WebhookSender.post``, reporting a ``SendResult``).
It keeps no state: which events are owed, their ids and attempt counts are
the outbox's, and the question's object is the API's.
"""

from bot.webhooks._errors import TargetRefused, WebhookError
from bot.webhooks._events import EVENT_TYPES, EventType, event_body, rfc3339
from bot.webhooks._retry import retry_delay
from bot.webhooks._sender import (
    Refused,
    Retry,
    SendResult,
    Sent,
    SessionFactory,
    WebhookSender,
    default_session,
)
from bot.webhooks._settings import WebhookSettings, random_webhook_secret, webhook_key
from bot.webhooks._signing import signed_headers
from bot.webhooks._targets import PublicResolver, check_target, is_private

__all__ = [
    "EVENT_TYPES",
    "EventType",
    "PublicResolver",
    "Refused",
    "Retry",
    "SendResult",
    "Sent",
    "SessionFactory",
    "TargetRefused",
    "WebhookError",
    "WebhookSender",
    "WebhookSettings",
    "check_target",
    "default_session",
    "event_body",
    "is_private",
    "random_webhook_secret",
    "retry_delay",
    "rfc3339",
    "signed_headers",
    "webhook_key",
]
