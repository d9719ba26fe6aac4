"""Microsoft Teams: runs started from chat, questions as Adaptive Cards, answers by Action.Execute.

The adapter translates activities into ``RunService`` calls and renders
questions as cards; who may answer, whether a token is good and whether an
answer fits are decided in ``bot/``. The SDK under it (botbuilder-core or the
Microsoft 365 Agents SDK, ``BOT_TEAMS_SDK``) is reached through ``_sdk`` only.
"""

from adapters.teams._cards import CardContext, question_card
from adapters.teams._closed import closed_card, refusal_card
from adapters.teams._mount import mount_teams
from adapters.teams._package import build_package
from adapters.teams._surface import TeamsSurface

__all__ = [
    "CardContext",
    "TeamsSurface",
    "build_package",
    "closed_card",
    "mount_teams",
    "question_card",
    "refusal_card",
]
