"""Errors the stores raise on purpose."""

from __future__ import annotations

from bot.errors import BotError


class StoreError(BotError):
    """A store cannot be opened or used as configured; the message says what to change."""
