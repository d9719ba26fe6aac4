"""Teams' settings: the Bot Framework's names, TEAMS_ aliases, the SDK's keys for other clouds.

An app registration that cannot authenticate (an id without its secret,
a single-tenant app without its tenant) is refused at start. Emulator
mode, with no app id, is safe only on a loopback bind; that depends on the
serving settings, so it is checked where the settings are composed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, model_validator

from bot.component_settings import ComponentSettings, Secret


def _names(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class TeamsSettings(ComponentSettings):
    """The Azure Bot's app registration, whether Teams is on, and cloud overrides."""

    mode: Literal["auto", "on", "off"] = Field("auto", alias="BOT_TEAMS")
    app_id: str | None = Field(
        None, alias="MicrosoftAppId", validation_alias=_names("MicrosoftAppId", "TEAMS_APP_ID")
    )
    app_password: Secret = Field(
        None,
        alias="MicrosoftAppPassword",
        validation_alias=_names("MicrosoftAppPassword", "TEAMS_APP_PASSWORD"),
    )
    app_type: Literal["MultiTenant", "SingleTenant", "UserAssignedMSI"] = Field(
        "MultiTenant",
        alias="MicrosoftAppType",
        validation_alias=_names("MicrosoftAppType", "TEAMS_APP_TYPE"),
    )
    app_tenant_id: str | None = Field(
        None,
        alias="MicrosoftAppTenantId",
        validation_alias=_names("MicrosoftAppTenantId", "TEAMS_APP_TENANT_ID"),
    )
    openid_metadata_url: str | None = Field(None, alias="TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL")
    token_issuer: str | None = Field(None, alias="TO_BOT_FROM_CHANNEL_TOKEN_ISSUER")
    login_url: str | None = Field(None, alias="TO_CHANNEL_FROM_BOT_LOGIN_URL")
    oauth_scope: str | None = Field(None, alias="TO_CHANNEL_FROM_BOT_OAUTH_SCOPE")

    @model_validator(mode="after")
    def _registration_authenticates(self) -> TeamsSettings:
        if not self.app_id:
            return self
        if self.app_type != "UserAssignedMSI" and self.app_password is None:
            raise ValueError(
                "MicrosoftAppId is set without MicrosoftAppPassword; set the client secret "
                "of the Azure Bot's app registration"
            )
        if self.app_type != "MultiTenant" and not self.app_tenant_id:
            raise ValueError(
                f"MicrosoftAppType={self.app_type} needs MicrosoftAppTenantId; set "
                "the directory (tenant) id of the app registration"
            )
        return self

    def enabled(self, *, local: bool) -> bool:
        """On when asked, or (auto) with an app id, or in emulator mode on a loopback bind."""
        if self.mode == "auto":
            return bool(self.app_id) or local
        return self.mode == "on"


class TeamsAppId(ComponentSettings):
    """The app id alone, for ``teams-package``: the package never holds the secret."""

    app_id: str | None = Field(
        None, alias="MicrosoftAppId", validation_alias=_names("MicrosoftAppId", "TEAMS_APP_ID")
    )
