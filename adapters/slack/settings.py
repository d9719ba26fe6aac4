"""Slack's settings: one workspace with a bot token, several through OAuth.

Events arrive over HTTP when a signing secret is set, over Socket Mode
when an app token is; the combinations that cannot work are refused at
start, each in one line naming what to set (see docs/slack.md).
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from bot.component_settings import ComponentSettings, Secret


class SlackSettings(ComponentSettings):
    """Tokens and secrets of the Slack app, and the Web API it talks to."""

    bot_token: Secret = Field(None, alias="SLACK_BOT_TOKEN")
    signing_secret: Secret = Field(None, alias="SLACK_SIGNING_SECRET")
    app_token: Secret = Field(None, alias="SLACK_APP_TOKEN")
    client_id: str | None = Field(None, alias="SLACK_CLIENT_ID")
    client_secret: Secret = Field(None, alias="SLACK_CLIENT_SECRET")
    installation_key: Secret = Field(None, alias="SLACK_INSTALLATION_KEY")
    api_url: str = Field("https://slack.com/api/", alias="SLACK_API_URL")

    @field_validator("api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("use the Web API's base URL, e.g. https://slack.com/api/")
        return value if value.endswith("/") else value + "/"

    @model_validator(mode="after")
    def _complete(self) -> SlackSettings:
        http = self.signing_secret is not None
        socket = self.app_token is not None
        if socket and not self.app_token.get_secret_value().startswith("xapp-"):  # type: ignore[union-attr]
            raise ValueError("SLACK_APP_TOKEN is an app-level token starting with xapp-")
        if self.bot_token is not None and not (http or socket):
            raise ValueError(
                "SLACK_BOT_TOKEN is set without SLACK_SIGNING_SECRET (events over HTTP) or "
                "SLACK_APP_TOKEN (Socket Mode); set one"
            )
        if self.client_id is not None:
            if self.client_secret is None or not http:
                raise ValueError(
                    "SLACK_CLIENT_ID needs SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET for OAuth"
                )
            if self.bot_token is not None:
                raise ValueError(
                    "set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID (OAuth), not both"
                )
        return self

    def warnings(self) -> list[str]:
        """A signing secret or an app token alone starts nothing: Slack stays off."""
        if self.mode is not None:
            return []
        given = [
            name
            for name, value in (
                ("SLACK_SIGNING_SECRET", self.signing_secret),
                ("SLACK_APP_TOKEN", self.app_token),
                ("SLACK_CLIENT_SECRET", self.client_secret),
            )
            if value is not None
        ]
        if not given:
            return []
        return [
            f"{' and '.join(given)} set without SLACK_BOT_TOKEN (one workspace) or "
            "SLACK_CLIENT_ID (OAuth), so Slack is off; set one, or unset "
            + ("them" if len(given) > 1 else "it")
        ]

    @property
    def mode(self) -> str | None:
        """How Slack is configured, in words; None when it is not."""
        if self.bot_token is None and self.client_id is None:
            return None
        workspaces = "one workspace" if self.bot_token else "OAuth, many workspaces"
        transport = "Socket Mode" if self.app_token else "HTTP at /slack/events"
        return f"{workspaces}, {transport}"
