"""Where an API question goes: a route (surface, conversation, thread) as a ``Conversation``.

The scope must be the one the surface will see on the answer (Slack's
``team:channel``, Teams' tenant), or the answer would be refused as coming
from elsewhere. Slack's team is the bot token's own (``auth.test``), or
given as ``T123:C456``; a Teams conversation must have been seen before,
since only its stored conversation reference lets the bot post there.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bot.contract.identity import IdentityError, canonical
from bot.contract.models import Route
from bot.errors import BotError
from bot.service.delivering.surfaces import Conversation, DeliveryError, Surface
from bot.stores.ports import Runs


class Unroutable(BotError):
    """The bridge cannot post to this route; ``sentence`` says why (a 422)."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


@runtime_checkable
class KnowsItsWorkspace(Protocol):
    """A surface that can name the workspace its credentials belong to (Slack's team id)."""

    async def workspace(self) -> str: ...


NOT_SERVED = "The bridge does not serve {surface} here; enable it or pick another surface."
TEAMS_UNSEEN = (
    "The bot has never been in this Teams conversation; install the bot there (or message it "
    "once) so it can post."
)
CONSOLE_FIRST = (
    "The console shows a question only in its first route's conversation; put the console "
    "route first, or leave it out."
)
SLACK_NO_TEAM = "The Slack workspace of the bot token is unknown; give the route as T123:C456."
NOT_AN_ADDRESS = (
    "{conversation!r} is not an email address; give one recipient per route, such as "
    "ana@example.com."
)


def check_further(routes: list[Route]) -> None:
    """``Unroutable`` if a route after the first is one no further post can reach."""
    if any(route.surface == "console" for route in routes[1:]):
        raise Unroutable(CONSOLE_FIRST)


async def conversation_for(route: Route, surfaces: dict[str, Surface], runs: Runs) -> Conversation:
    """The conversation to post ``route``'s question in; ``Unroutable`` with the reason if none."""
    surface = surfaces.get(route.surface)
    if surface is None:
        raise Unroutable(NOT_SERVED.format(surface=route.surface.capitalize()))
    match route.surface:
        case "console":
            return Conversation("console", "console", route.conversation, route.thread or "")
        case "link":
            # Its answers come from the question page, whose scope is the question's own.
            return Conversation("link", "link", route.conversation, route.thread or "")
        case "slack":
            return await _slack(route, surface)
        case "teams":
            return await _teams(route, runs)
        case "email":
            return _email(route)
    raise Unroutable(NOT_SERVED.format(surface=route.surface))


async def _slack(route: Route, surface: Surface) -> Conversation:
    team, sep, channel = route.conversation.rpartition(":")
    if not sep:
        try:
            team = await surface.workspace() if isinstance(surface, KnowsItsWorkspace) else ""
        except DeliveryError:
            team = ""  # no single bot token to ask (OAuth installs): the route must name it
    if not team:
        raise Unroutable(SLACK_NO_TEAM)
    thread = route.thread or ""
    reference = {"team": team, "channel": channel, "thread_ts": thread}
    key = f"{channel}:{thread}" if thread else channel
    return Conversation("slack", f"{team}:{channel}", key, thread, reference)


async def _teams(route: Route, runs: Runs) -> Conversation:
    seen = await runs.in_conversation("teams", route.conversation, limit=1)
    reference = seen[-1].conversation.get("reference") if seen else None
    if not isinstance(reference, dict) or not reference:
        raise Unroutable(TEAMS_UNSEEN)
    return Conversation("teams", seen[-1].scope, route.conversation, route.thread or "", reference)


def _email(route: Route) -> Conversation:
    """One recipient: the key is the address as its identity spells it (``email:<address>``)."""
    try:
        person = canonical(f"email:{route.conversation}")
    except IdentityError:
        raise Unroutable(NOT_AN_ADDRESS.format(conversation=route.conversation)) from None
    address = person.partition(":")[2]
    return Conversation("email", person, address, "", {"to": address})
