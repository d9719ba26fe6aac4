"""Where an API question goes: each surface's route as the conversation its answers come from."""

from __future__ import annotations

from typing import Any

import pytest

from bot.api._routes import SLACK_NO_TEAM, TEAMS_UNSEEN, Unroutable, conversation_for
from bot.contract.models import Route
from bot.questions.records import RunRecord
from bot.questions.write import Write
from bot.service.delivering.surfaces import DeliveryError
from bot.stores.ports import Stores
from bot.testing import RecordingSurface


class Slack(RecordingSurface):
    def __init__(self, team: str | None) -> None:
        super().__init__(name="slack")
        self.team = team

    async def workspace(self) -> str:
        if self.team is None:
            raise DeliveryError("not_authed: no token for this team", permanent=True)
        return self.team


def route(surface: str, conversation: str, thread: str | None = None) -> Route:
    return Route.model_validate(
        {"surface": surface, "conversation": conversation, "thread": thread}
    )


async def test_slack_takes_the_tokens_team_or_the_one_the_route_names(
    sqlite_stores: Stores,
) -> None:
    """C456 is in the bot token's team; T9:C456 names it; no token to ask is a 422 sentence."""
    surfaces: dict[str, Any] = {"slack": Slack("T1")}
    where = await conversation_for(route("slack", "C456"), surfaces, sqlite_stores.runs)
    assert (where.scope, where.reference["channel"], where.thread) == ("T1:C456", "C456", "")
    named = await conversation_for(route("slack", "T9:C456", "17.1"), surfaces, sqlite_stores.runs)
    assert (named.scope, named.thread, named.key) == ("T9:C456", "17.1", "C456:17.1")
    with pytest.raises(Unroutable) as refused:
        await conversation_for(route("slack", "C456"), {"slack": Slack(None)}, sqlite_stores.runs)
    assert refused.value.sentence == SLACK_NO_TEAM


async def test_teams_needs_a_conversation_the_bot_has_been_in(sqlite_stores: Stores) -> None:
    """Its stored reference and tenant scope are reused; an unseen conversation is refused."""
    surfaces: dict[str, Any] = {"teams": RecordingSurface(name="teams")}
    with pytest.raises(Unroutable) as refused:
        await conversation_for(route("teams", "19:new"), surfaces, sqlite_stores.runs)
    assert refused.value.sentence == TEAMS_UNSEEN
    reference = {"serviceUrl": "https://smba.invalid/", "conversation": {"id": "19:seen"}}
    seen = RunRecord(
        "r1",
        "tenant-1",
        "teams",
        "teams:u1",
        "hi",
        1.0,
        conversation={"key": "19:seen", "thread": "", "reference": reference},
    )
    assert await sqlite_stores.unit.apply(_start(seen)) is not None
    where = await conversation_for(route("teams", "19:seen"), surfaces, sqlite_stores.runs)
    assert (where.scope, where.reference) == ("tenant-1", reference)


async def test_a_surface_the_bridge_does_not_serve_is_refused(sqlite_stores: Stores) -> None:
    with pytest.raises(Unroutable, match="does not serve Slack"):
        await conversation_for(route("slack", "C1"), {}, sqlite_stores.runs)


def _start(run: RunRecord) -> Write:
    return Write(run.run_id, run.created_at, new_run=run)
