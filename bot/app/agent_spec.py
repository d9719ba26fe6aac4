"""What a deployment's agent factory returns, and how one is loaded.

``BOT_AGENT=package.module:factory`` names a callable taking the settings
and returning an AgentSpec; the composition root binds it to the stores,
the signer and the human-interaction capability, so a deployment never
wires those itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.errors import BotError
from bot.human.capability import InteractionRegistration
from bot.kernel.tools import Tool
from bot.providers.base import Provider

if TYPE_CHECKING:
    from bot.app.settings import Settings


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """Tools, interactions and instructions; ``provider`` None means the configured model."""

    tools: Sequence[Tool]
    registrations: Sequence[InteractionRegistration]
    system_prompt: str = ""
    provider: Provider | None = None
    name: str = "agent"
    max_rounds: int = field(default=12)


AgentFactory = Callable[["Settings"], AgentSpec]


def load_factory(path: str) -> AgentFactory:
    """Import ``package.module:factory``; errors name BOT_AGENT and what failed."""
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BotError(f"BOT_AGENT: cannot import {module_name!r} ({error})") from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise BotError(f"BOT_AGENT: {module_name!r} has no callable {attribute!r}")
    return factory  # type: ignore[no-any-return]
