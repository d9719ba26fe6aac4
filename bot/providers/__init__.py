"""Model providers: the Provider port, a scripted one and an OpenAI-compatible one."""

from bot.providers.base import Provider, ProviderError
from bot.providers.scripted import ScriptedProvider

__all__ = ["Provider", "ProviderError", "ScriptedProvider"]
