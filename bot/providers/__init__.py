"""Model providers: a scripted one and an OpenAI-compatible one.

Each implements the kernel's ``Provider`` port (``bot.kernel.provider``),
re-exported here for convenience; the kernel never imports this package.
"""

from bot.providers.base import Provider, ProviderError
from bot.providers.scripted import ScriptedProvider

__all__ = ["Provider", "ProviderError", "ScriptedProvider"]
