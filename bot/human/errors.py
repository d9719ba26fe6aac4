"""The capability's errors; re-exported from ``bot.human`` and ``bot.human.capability``."""

from __future__ import annotations

from collections.abc import Mapping

from bot.errors import BotError


class HumanInteractionError(BotError):
    """A pause was refused; no token was minted."""


class InteractionConfigurationError(HumanInteractionError):
    """The capability was composed so that it could never pause; says what is missing."""


class AnswerValidationError(BotError):
    """An answer does not fit the response schema; ``fields`` says where."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in fields.items()))
        self.fields = dict(fields)
