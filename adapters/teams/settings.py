"""Teams' settings: the Bot Framework's names, TEAMS_ aliases, the Agents SDK's names, clouds.

Two SDKs can serve Teams (``BOT_TEAMS_SDK``): ``botbuilder`` (botbuilder-core,
the default) or ``agents`` (the Microsoft 365 Agents SDK, its successor). The
app registration reads from the same fields on both, under the Bot Framework's
names or the Agents SDK's (``CONNECTIONS__SERVICE_CONNECTION__SETTINGS__*``);
docs/teams.md has the table of which maps to which.

An app registration that cannot authenticate (an id without its secret,
a single-tenant app without its tenant) is refused at start. Emulator
mode, with no app id, is safe only on a loopback bind; that depends on the
serving settings, so it is checked where the settings are composed.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from bot.component_settings import ComponentSettings, Secret
from bot.errors import install_extra


def _names(*names: str) -> AliasChoices:
    return AliasChoices(*names)


# The Agents SDK's name for a setting of its service connection.
AGENTS_CONNECTION = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"

# The public cloud, where no override says otherwise: the channel's OpenID metadata,
# and where and for what the bot gets its own token (the Bot Framework's
# published values, the same in both SDKs).
PUBLIC_OPENID_METADATA_URL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
PUBLIC_LOGIN_URL_PREFIX = "https://login.microsoftonline.com/"
MULTI_TENANT_LOGIN_TENANT = "botframework.com"
TOKEN_ENDPOINT_PATH = "/oauth2/v2.0/token"  # noqa: S105  a path, not a secret
PUBLIC_OAUTH_SCOPE = "https://api.botframework.com"

# The SDK each BOT_TEAMS_SDK value runs Teams on, as ``check`` and the log name it.
SDK_NAMES = {
    "botbuilder": "botbuilder-core (the Bot Framework SDK, unsupported since 2025-12-31)",
    "agents": "the Microsoft 365 Agents SDK",
}


class TeamsSettings(ComponentSettings):
    """The Azure Bot's app registration, whether Teams is on, and cloud overrides."""

    mode: Literal["auto", "on", "off"] = Field("auto", alias="BOT_TEAMS")
    sdk: Literal["botbuilder", "agents"] = Field("botbuilder", alias="BOT_TEAMS_SDK")
    app_id: str | None = Field(
        None,
        alias="MicrosoftAppId",
        validation_alias=_names("MicrosoftAppId", "TEAMS_APP_ID", f"{AGENTS_CONNECTION}CLIENTID"),
    )
    app_password: Secret = Field(
        None,
        alias="MicrosoftAppPassword",
        validation_alias=_names(
            "MicrosoftAppPassword", "TEAMS_APP_PASSWORD", f"{AGENTS_CONNECTION}CLIENTSECRET"
        ),
    )
    app_type: Literal["MultiTenant", "SingleTenant", "UserAssignedMSI"] = Field(
        "MultiTenant",
        alias="MicrosoftAppType",
        validation_alias=_names("MicrosoftAppType", "TEAMS_APP_TYPE"),
    )
    app_tenant_id: str | None = Field(
        None,
        alias="MicrosoftAppTenantId",
        validation_alias=_names(
            "MicrosoftAppTenantId", "TEAMS_APP_TENANT_ID", f"{AGENTS_CONNECTION}TENANTID"
        ),
    )
    openid_metadata_url: str | None = Field(None, alias="TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL")
    token_issuer: str | None = Field(None, alias="TO_BOT_FROM_CHANNEL_TOKEN_ISSUER")
    login_url: str | None = Field(
        None,
        alias="TO_CHANNEL_FROM_BOT_LOGIN_URL",
        validation_alias=_names("TO_CHANNEL_FROM_BOT_LOGIN_URL", f"{AGENTS_CONNECTION}AUTHORITY"),
    )
    oauth_scope: str | None = Field(
        None,
        alias="TO_CHANNEL_FROM_BOT_OAUTH_SCOPE",
        validation_alias=_names("TO_CHANNEL_FROM_BOT_OAUTH_SCOPE", f"{AGENTS_CONNECTION}SCOPES"),
    )

    @field_validator("sdk")
    @classmethod
    def _sdk_installed(cls, value: str) -> str:
        if value == "agents" and not _agents_sdk_installed():
            raise ValueError(
                "BOT_TEAMS_SDK=agents needs the teams-agents extra, which is not installed: "
                + install_extra("teams-agents")
            )
        return value

    @field_validator("oauth_scope")
    @classmethod
    def _scope_is_the_resource(cls, value: str | None) -> str | None:
        # The Agents SDK's SCOPES names the scope (``.../.default``); ours, the resource.
        return value.removesuffix("/.default") if value else value

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

    def sdk_name(self) -> str:
        return SDK_NAMES[self.sdk]

    def login_url_or_default(self) -> str:
        """Where the bot gets its token: the override, else its tenant's (multi-tenant
        apps: the Bot Framework's) on the public cloud."""
        if self.login_url:
            return self.login_url
        tenant = self.app_tenant_id if self.app_type == "SingleTenant" else None
        return PUBLIC_LOGIN_URL_PREFIX + (tenant or MULTI_TENANT_LOGIN_TENANT)


def _agents_sdk_installed() -> bool:
    try:
        return importlib.util.find_spec("microsoft_agents.hosting.aiohttp") is not None
    except ModuleNotFoundError:  # no microsoft_agents at all
        return False


class TeamsAppId(ComponentSettings):
    """The app id alone, for ``teams-package``: the package never holds the secret."""

    app_id: str | None = Field(
        None, alias="MicrosoftAppId", validation_alias=_names("MicrosoftAppId", "TEAMS_APP_ID")
    )
