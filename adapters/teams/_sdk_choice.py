"""Which SDK serves Teams: the one ``BOT_TEAMS_SDK`` names, imported only when chosen.

So a server on the Agents SDK never imports botbuilder, and one on botbuilder
never imports the Agents SDK.
"""

from __future__ import annotations

from adapters.teams._sdk import TeamsSdk
from adapters.teams.settings import TeamsSettings


def open_sdk(settings: TeamsSettings) -> TeamsSdk:
    """The SDK ``BOT_TEAMS_SDK`` names, set up from ``settings``."""
    if settings.sdk == "agents":
        from adapters.teams._agents import AgentsSdk

        return AgentsSdk(settings)
    from adapters.teams._botbuilder import BotFramework

    return BotFramework(settings)
