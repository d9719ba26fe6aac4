"""Who the admins are: ids as surfaces authenticate them, and Slack user groups.

An id is ``slack:T:U`` or ``teams:tenant:aad`` (what the surface builds
from the platform's own authentication), so no command argument can claim
to be one. Groups are resolved by Slack, which alone has them.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from bot.component_settings import ComponentSettings, CsvList
from bot.contract.identity import canonical


class AdminSettings(ComponentSettings):
    """The admins by id, and the Slack user groups (``S...``) whose members are admins too."""

    ids: CsvList = Field(default_factory=list, alias="BOT_ADMINS")
    groups: CsvList = Field(default_factory=list, alias="BOT_ADMIN_GROUPS")

    @field_validator("ids")
    @classmethod
    def _canonical(cls, value: list[str]) -> list[str]:
        # One spelling per person (``bot.contract.identity``); an id no surface builds is refused.
        return [canonical(admin) for admin in value]
