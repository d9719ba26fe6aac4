"""Where a question is posted: one ``Route``, or several (``routes``), each checked once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_ROUTES = 10
# ``email``: the conversation is the recipient's address, one route per recipient.
# ``link`` posts nothing: the 201 returns an answer link per ``link:<id>`` answerer.
Surface = Literal["slack", "teams", "console", "email", "link"]


class Route(BaseModel):
    """Where the question is posted."""

    model_config = ConfigDict(extra="forbid", strict=True)
    surface: Surface = Field(description="The chat surface that shows the question.")
    conversation: str = Field(
        min_length=1,
        max_length=200,
        description=(
            "A Slack channel id, a Teams conversation id, a console conversation, or for "
            "email one recipient's plain address, or for link any id the agent chooses (the "
            "questions it groups)."
        ),
    )
    thread: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Post into this thread (a Slack thread ts, a Teams reply chain).",
    )

    @property
    def key(self) -> str:
        """The route as one string (``surface:conversation``, ``:thread`` when it has one)."""
        return ":".join(p for p in (self.surface, self.conversation, self.thread) if p)


# What a caller may write for a route: a ``Route``, a mapping, or "slack:C123[/thread]".
RouteLike = Route | Mapping[str, Any] | str
# A list (or tuple) of routes posts the question on each (``routes``).
RoutesLike = RouteLike | list[RouteLike] | tuple[RouteLike, ...]


def route_of(route: RouteLike) -> Route:
    """A ``Route`` from itself, a mapping, or ``"surface:conversation[/thread]"``."""
    if isinstance(route, Route):
        return route
    if isinstance(route, str):
        surface, sep, rest = route.partition(":")
        conversation, _, thread = rest.partition("/")
        if not sep:
            raise ValueError(f"route {route!r} must read surface:conversation, e.g. slack:C123")
        return Route.model_validate(
            {"surface": surface, "conversation": conversation, "thread": thread or None}
        )
    return Route.model_validate(dict(route))


def one_route(route: Route | None, routes: list[Route] | None) -> None:
    """``route`` or ``routes``, exactly one; the list neither empty nor repeating a route."""
    if (route is None) == (routes is None):
        raise ValueError("give exactly one of route and routes")
    if routes is not None:
        if not routes:
            raise ValueError("routes must name at least one route")
        keys = [r.key for r in routes]
        if len(set(keys)) != len(keys):
            raise ValueError("routes must not name the same route twice")
