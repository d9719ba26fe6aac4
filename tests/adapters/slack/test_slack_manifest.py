"""manifest.yml declares everything the adapter relies on, as Slack's manifest schema spells it,
and nothing it does not: each scope is used and each event listened for.

That evidence is read from adapters/slack's source: the Web API methods it
names and the listeners it registers (``app.event("...")``,
``app.command("...")``), so a scope or event added to the manifest without
code (or code that drops a call) fails here.
"""

from __future__ import annotations

import re
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


ROOT = Path(__file__).resolve().parents[3]
SOURCE = "\n".join(p.read_text() for p in sorted((ROOT / "adapters" / "slack").glob("*.py")))
EVENTS = set(re.findall(r'\.event\("(\w+)"\)', SOURCE))
COMMANDS = set(re.findall(r'\.command\("(/\w+)"\)', SOURCE))
METHODS = set(re.findall(r'"((?:chat|usergroups|users|conversations|views)\.[\w.]+)"', SOURCE))
# The message.* event each *:history scope receives.
HISTORY = {"channels": "channels", "groups": "groups", "im": "im", "mpim": "mpim"}


def scopes() -> list[str]:
    return list(manifest()["oauth_config"]["scopes"]["bot"])


def events() -> list[str]:
    return list(manifest()["settings"]["event_subscriptions"]["bot_events"])


def test_each_scope_is_used_by_the_code() -> None:
    unused = []
    for scope in scopes():
        family, _, access = scope.partition(":")
        if scope == "app_mentions:read":
            used = "app_mention" in EVENTS and "app_mention" in events()
        elif access == "history":
            used = "message" in EVENTS and f"message.{HISTORY[family]}" in events()
        elif scope == "chat:write":
            used = any(m.startswith("chat.") for m in METHODS)
        elif scope == "commands":
            declared = {c["command"] for c in manifest()["features"]["slash_commands"]}
            used = bool(declared) and declared <= COMMANDS
        elif access == "read":
            used = any(m.startswith(f"{family}.") for m in METHODS)
        else:
            used = False
        if not used:
            unused.append(scope)
    assert unused == [], f"scopes the code does not use: {unused}"


def test_each_event_is_listened_for_and_each_history_scope_has_its_event() -> None:
    unheard = [e for e in events() if e.split(".")[0] not in EVENTS]
    assert unheard == [], f"events no listener registers: {unheard}"
    for event in events():
        if event.startswith("message."):
            assert f"{event.removeprefix('message.')}:history" in scopes(), event


def test_direct_messages_have_the_messages_tab() -> None:
    home = manifest()["features"]["app_home"]
    assert home["messages_tab_enabled"] is True
    assert home["messages_tab_read_only_enabled"] is False
