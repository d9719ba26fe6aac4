"""The model's settings: an OpenAI-compatible API, its key, and which model to ask.

Without a base URL the demo runs scripted; a deployment's agent may bring
its own provider instead. A URL given without its key is refused at start
rather than failing on the first question.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from bot.component_settings import ComponentSettings, Secret
from bot.errors import BotError
from bot.providers.base import Provider
from bot.providers.openai_compat import OpenAICompatibleProvider


class ProviderSettings(ComponentSettings):
    """Where the OpenAI-compatible API is, the key it takes, and the model's name."""

    base_url: str | None = Field(None, alias="OPENAI_BASE_URL")
    api_key: Secret = Field(None, alias="OPENAI_API_KEY")
    model: str = Field("gpt-4o-mini", alias="OPENAI_MODEL")

    @field_validator("base_url")
    @classmethod
    def _url_is_absolute(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^/?#\s@]+(/[^?#\s]*)?", value):
            raise ValueError(
                "use the API's base URL, like https://api.openai.com/v1 (http or https, "
                "no query string)"
            )
        return value

    @model_validator(mode="after")
    def _url_has_its_key(self) -> ProviderSettings:
        if self.base_url and self.api_key is None:
            raise ValueError("OPENAI_BASE_URL is set without OPENAI_API_KEY; set both")
        return self

    def build(self) -> Provider:
        """The configured model, or BotError saying how to configure one."""
        if self.base_url is None or self.api_key is None:
            raise BotError(
                "the agent has no model: set OPENAI_BASE_URL and OPENAI_API_KEY, or return a "
                "provider from the BOT_AGENT factory."
            )
        return OpenAICompatibleProvider(
            base_url=self.base_url,
            api_key=self.api_key.get_secret_value(),
            model=self.model,
        )
