"""The webhook component's errors, under the project's one base error."""

from __future__ import annotations

from bot.errors import BotError


class WebhookError(BotError):
    """A webhook was asked for in a way that cannot work; the message says what to change."""


class TargetRefused(WebhookError, OSError):
    """A callback's host resolved to an address webhooks may not reach.

    An ``OSError`` too, so the HTTP client reports it as a failed lookup and
    never connects; the sender turns it into a permanent refusal.
    """
