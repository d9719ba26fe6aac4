"""How long a pause may stay open."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from bot.errors import BotError


@dataclass(frozen=True, slots=True)
class TTLPolicy:
    """A default, per-interaction overrides, and a ceiling nothing exceeds."""

    default: timedelta = timedelta(hours=24)
    maximum: timedelta = timedelta(days=7)
    overrides: Mapping[str, timedelta] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.default <= timedelta(0) or self.maximum <= timedelta(0):
            raise BotError("a TTL must be positive; check the TTL settings.")

    def for_interaction(self, name: str, registered: timedelta | None = None) -> timedelta:
        """The policy's override wins, then the registration's, then the default."""
        ttl = self.overrides.get(name) or registered or self.default
        return min(ttl, self.maximum)


DEFAULT_TTL = TTLPolicy()
