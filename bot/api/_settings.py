"""The agents API's settings: the keys agents sign in with, and how fast one may ask."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, SecretStr, field_validator

from bot.api._keys import DEFAULT_CREATES_PER_MINUTE, keys_from_setting, secrets_in_setting
from bot.component_settings import NOT_BLANK, ComponentSettings, Hidden
from bot.stores.records import ApiKey

# Each key in the list is a secret of its own for the log filter.
ApiKeysSetting = Annotated[SecretStr | None, NOT_BLANK, Hidden(parts=secrets_in_setting)]


class ApiSettings(ComponentSettings):
    """Keys listed here, beside those kept in the store (``python -m bot api-key create``)."""

    keys: ApiKeysSetting = Field(None, alias="BOT_API_KEYS")
    # For a key that names no creates_per_minute of its own; counted in each process.
    creates_per_minute: int = Field(
        DEFAULT_CREATES_PER_MINUTE, alias="BOT_API_CREATES_PER_MINUTE", ge=1
    )

    @field_validator("keys")
    @classmethod
    def _keys_parse(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            keys_from_setting(value.get_secret_value())
        return value

    def configured_keys(self) -> tuple[ApiKey, ...]:
        return () if self.keys is None else keys_from_setting(self.keys.get_secret_value())
