"""What every model provider shares: the kernel's port, and the error a provider raises.

``Provider`` is defined by the kernel (``bot.kernel.provider``) and
re-exported here for the imports that already name this module.
"""

from __future__ import annotations

from bot.errors import BotError
from bot.kernel.provider import Provider

__all__ = ["Provider", "ProviderError"]


class ProviderError(BotError):
    """The model could not be asked; the message says whether to retry."""
