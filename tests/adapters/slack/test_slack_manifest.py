"""manifest.yml declares everything the adapter relies on, as Slack's manifest schema spells it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from adapters.slack._installations import BOT_SCOPES

MANIFEST = Path(__file__).resolve().parents[3] / "manifest.yml"


def manifest() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text())
    assert isinstance(data, dict)
    return data


def test_the_manifest_asks_for_the_scopes_oauth_asks_for() -> None:
    assert set(manifest()["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES)


def test_events_interactivity_command_and_socket_mode_are_declared() -> None:
    data = manifest()
    settings = data["settings"]
    assert {"app_mention", "message.im", "message.channels"} <= set(
        settings["event_subscriptions"]["bot_events"]
    )
    assert settings["event_subscriptions"]["request_url"].endswith("/slack/events")
    assert settings["interactivity"] == {
        "is_enabled": True,
        "request_url": settings["event_subscriptions"]["request_url"],
    }
    assert settings["socket_mode_enabled"] is True
    command = data["features"]["slash_commands"][0]
    assert command["command"] == "/hitl" and command["url"].endswith("/slack/events")
    assert data["oauth_config"]["redirect_urls"][0].endswith("/slack/oauth_redirect")
    assert len(data["display_information"]["name"]) <= 35
    assert data["features"]["bot_user"]["display_name"]
