"""How long a pause may stay open: the policy, and the settings that configure it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from pydantic import Field, model_validator

from bot.component_settings import ComponentSettings
from bot.errors import BotError


def require_positive_ttl(ttl: timedelta, what: str) -> None:
    """Refuse a TTL of zero or less: a pause that is born expired can never be answered."""
    if ttl <= timedelta(0):
        raise BotError(f"{what} must be positive, not {ttl}; check the TTL settings.")


@dataclass(frozen=True, slots=True)
class TTLPolicy:
    """A default, per-interaction overrides, and a ceiling nothing exceeds."""

    default: timedelta = timedelta(hours=24)
    maximum: timedelta = timedelta(days=7)
    overrides: Mapping[str, timedelta] = field(default_factory=dict)

    def __post_init__(self) -> None:
        require_positive_ttl(self.default, "the default TTL")
        require_positive_ttl(self.maximum, "the maximum TTL")
        if self.default > self.maximum:
            raise BotError(
                f"the default TTL ({self.default}) exceeds the maximum ({self.maximum}); "
                "lower the default or raise the maximum."
            )
        for name, ttl in self.overrides.items():
            require_positive_ttl(ttl, f"the TTL override for {name!r}")

    def for_interaction(self, name: str, registered: timedelta | None = None) -> timedelta:
        """The policy's override wins, then the registration's, then the default."""
        override = self.overrides.get(name)
        if override is not None:
            ttl = override
        elif registered is not None:
            require_positive_ttl(registered, f"the registered TTL of {name!r}")
            ttl = registered
        else:
            ttl = self.default
        return min(ttl, self.maximum)


DEFAULT_TTL = TTLPolicy()


class TTLSettings(ComponentSettings):
    """A question's default lifetime and the ceiling, which extensions never pass either."""

    default_seconds: float = Field(24 * 3600, alias="BOT_TTL_SECONDS", gt=0)
    max_seconds: float = Field(7 * 24 * 3600, alias="BOT_MAX_TTL_SECONDS", gt=0)

    @model_validator(mode="after")
    def _default_fits(self) -> TTLSettings:
        if self.max_seconds < self.default_seconds:
            raise ValueError(
                "BOT_TTL_SECONDS exceeds BOT_MAX_TTL_SECONDS; lower it or raise the max"
            )
        return self

    def build(self) -> TTLPolicy:
        return TTLPolicy(
            default=timedelta(seconds=self.default_seconds),
            maximum=timedelta(seconds=self.max_seconds),
        )
