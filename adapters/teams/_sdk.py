"""The seam between the Teams adapter and the SDK that serves it: what an SDK does for it.

Two SDKs can authenticate Teams' requests, run the turn and get the bot its
token (``BOT_TEAMS_SDK``, chosen in ``_sdk_choice``): ``botbuilder``
(botbuilder-core, ``_botbuilder``) and ``agents`` (the Microsoft 365 Agents SDK,
``_agents``). Everything else in ``adapters/teams`` works on plain activity
dicts through ``TeamsSdk`` and does not know which one runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from bot.errors import BotError

# What a turn's logic gets: the activity as received and its conversation reference,
# as JSON. The body as received, not an SDK's model of it: a model's round trip
# drops fields Teams relies on (a mention's ``mentioned``, ``conversation.tenantId``).
TurnLogic = Callable[[dict[str, Any], dict[str, Any]], Awaitable[Any]]


class Unauthenticated(BotError):
    """The request's bearer token did not prove it came from the channel."""


class BadActivity(BotError, ValueError):
    """The body is not a Bot Framework activity."""


class TeamsSdk(Protocol):
    """Inbound authentication, the turn pipeline and outbound bot tokens."""

    app_id: str
    emulator: bool
    """No app id: requests are not authenticated (the Bot Framework Emulator, on loopback)."""
    metadata_url: str
    """Where the channel's signing keys are published (OpenID metadata)."""

    def parse(self, body: dict[str, Any]) -> Any:
        """The SDK's activity for a JSON body, or BadActivity."""
        ...

    async def authenticate(self, activity: Any, header: str) -> Any:
        """Prove the activity came from the channel (the Authorization header's JWT):
        the SDK's identity for the turn, or Unauthenticated. Emulator mode ignores it."""
        ...

    async def process(
        self, authenticated: Any, activity: Any, body: dict[str, Any], logic: TurnLogic
    ) -> Any:
        """Run ``logic`` inside the SDK's turn pipeline; return what it returned."""
        ...

    async def refresh_signing_keys(self) -> None:
        """Fetch the channel's signing keys now, off the event loop."""
        ...

    async def bot_token(self) -> str | None:
        """A token for calls to the connector; None in emulator mode."""
        ...
