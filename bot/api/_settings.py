"""The agents API's settings: the keys agents sign in with, and how fast one may ask."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, SecretStr, field_validator

from bot.api._keys import DEFAULT_CREATES_PER_MINUTE, keys_from_setting, secrets_in_setting
from bot.component_settings import NOT_BLANK, ComponentSettings, Hidden
from bot.questions.records import ApiKey

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


_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")


class LinkSettings(ComponentSettings):
    """The question page (``/q/...``): whether it also asks for a sign-in, who may frame it,
    and how many answers one client address may post a minute."""

    # Also ask for a console sign-in of the link's own answerer (``bot.api._page``).
    signin: bool = Field(False, alias="BOT_LINK_SIGNIN")
    # Origins allowed to show the page in an iframe (CSP frame-ancestors), space- or
    # comma-separated; none: the page cannot be framed at all.
    frame_ancestors: str = Field("", alias="BOT_LINK_FRAME_ANCESTORS")
    # Answers one client address may post a minute, over every link; then 429. A person
    # posts one answer; a loop posting a leaked link's form costs no more than this.
    posts_per_minute: int = Field(30, ge=1, alias="BOT_LINK_POSTS_PER_MINUTE")

    @field_validator("frame_ancestors")
    @classmethod
    def _origins(cls, value: str) -> str:
        for origin in _split(value):
            if not _ORIGIN.fullmatch(origin):
                raise ValueError(
                    f"BOT_LINK_FRAME_ANCESTORS entry {origin!r} is not an origin; write each "
                    "as https://host or https://host:port, separated by spaces"
                )
        return value

    @property
    def ancestors(self) -> tuple[str, ...]:
        return tuple(_split(self.frame_ancestors))


def _split(value: str) -> list[str]:
    return [part for part in re.split(r"[\s,]+", value.strip()) if part]
