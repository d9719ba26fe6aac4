"""``/api/messages``: a body that is not an activity is a 400, never a 5xx, never a run.

Teams runs in emulator mode here (loopback, no app id), so each request
reaches the bot's own checks; a loopback connector records every call out.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.doors._doors import Door, Logs, assert_only_a_refusal_recorded
from tests.e2e._teams import ALICE, TENANT, actions, card_of, execute, message
from tests.fakes.bf_connector import FakeConnector

NOT_ACTIVITY = (
    "The body is not a Bot Framework activity (a JSON object with a type, "
    "serviceUrl, conversation and from)."
)
JSON = {"Content-Type": "application/json"}


class TeamsDoor(Door):
    connector: FakeConnector

    async def activity(self, activity: Any) -> tuple[int, str]:
        return await self.send("/api/messages", json.dumps(activity).encode(), headers=JSON)


@contextlib.asynccontextmanager
async def teams_door(tmp_path: Path, **env: Any) -> AsyncIterator[TeamsDoor]:
    """The app with Teams on, its connector a loopback fake."""
    connector = await FakeConnector().start()
    try:
        opened = TeamsDoor(tmp_path, BOT_CONSOLE=False, **env)
        opened.connector = connector
        opened.outbound = connector.calls
        async with opened:
            yield opened
    finally:
        await connector.close()


@pytest.fixture
async def door(tmp_path: Path, teams_sdk: str) -> AsyncIterator[TeamsDoor]:
    async with teams_door(tmp_path) as opened:
        yield opened


async def _refused(door: TeamsDoor, status: int, send: Any) -> str:
    before = await door.state()
    with Logs() as logs:
        got, text = await send()
    assert got == status, text
    logs.assert_clean()
    assert await door.state() == before
    return text


def _without(activity: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in activity.items() if k not in keys}


async def test_a_5000_deep_body_is_a_400(door: TeamsDoor) -> None:
    body = b'{"type": "message", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    text = await _refused(door, 400, lambda: door.send("/api/messages", body, headers=JSON))
    assert json.loads(text) == {"error": NOT_ACTIVITY}


@pytest.mark.parametrize(
    "change",
    [
        lambda a: _without(a, "serviceUrl"),
        lambda a: _without(a, "conversation"),
        lambda a: _without(a, "from"),
        lambda a: {**a, "serviceUrl": 5},
        lambda a: {**a, "serviceUrl": "not a url"},
        lambda a: {**a, "from": {"id": 7}},
        lambda a: {**a, "from": "29:alice"},
        lambda a: {**a, "conversation": {"id": ["a"]}},
        lambda a: {**a, "conversation": {"id": ""}},
        lambda a: {**a, "text": ["deploy web"]},
        lambda a: {**a, "text": 12},
        lambda a: {**a, "entities": [1]},
        lambda a: {**a, "type": 1},
        lambda a: [a],
    ],
    ids=[
        "no serviceUrl",
        "no conversation",
        "no from",
        "serviceUrl a number",
        "serviceUrl not a URL",
        "from.id a number",
        "from a string",
        "conversation.id a list",
        "conversation.id empty",
        "text a list",
        "text a number",
        "entities not objects",
        "type a number",
        "an array",
    ],
)
async def test_a_message_missing_or_mistyping_what_teams_sends_starts_nothing(
    door: TeamsDoor, change: Any
) -> None:
    activity = change(message(door.connector.url, "deploy web"))
    text = await _refused(door, 400, lambda: door.activity(activity))
    assert json.loads(text) == {"error": NOT_ACTIVITY}


async def test_a_well_formed_message_still_starts_a_run(door: TeamsDoor) -> None:
    before = await door.state()
    status, _ = await door.activity(message(door.connector.url, "deploy web"))
    assert status == 201
    await door.connector.wait_for(door.connector.cards, what="question card")
    assert await door.state() != before


@pytest.mark.parametrize("name", ["composeExtension/query", "", None])
async def test_an_invoke_other_than_our_cards_is_a_400(door: TeamsDoor, name: str | None) -> None:
    activity = {**execute(door.connector.url, {"hitl": 1}), "name": name}
    text = await _refused(door, 400, lambda: door.activity(activity))
    assert "Action.Execute" in json.loads(text)["error"]


@pytest.mark.parametrize("q0", ["²", "9" * 5000, "٣", "-1", "1" * 7])
async def test_an_execute_with_a_strange_option_index_is_refused_in_the_card(
    door: TeamsDoor, q0: str
) -> None:
    """``int("²")`` raised; now a non-index is passed on, and validation refuses it."""
    status, _ = await door.activity(message(door.connector.url, "deploy web"))
    assert status == 201
    cards = await door.connector.wait_for(door.connector.cards, what="question card")
    staging = next(a for a in actions(card_of(cards[0].body)) if a["title"] == "staging")
    before = await door.state()
    with Logs() as logs:
        status, text = await door.activity(
            execute(door.connector.url, {**staging["data"], "q0": q0})
        )
    assert status == 200, text
    logs.assert_clean()
    assert_only_a_refusal_recorded(before, await door.state(), "AnswerInvalid")


async def test_a_replayed_admin_command_applies_once(tmp_path: Path, teams_sdk: str) -> None:
    """The same signed activity (same id) sent twice: one extension, one reply."""
    connector = await FakeConnector().start()
    try:
        admin = f"teams:{TENANT}:{ALICE['aadObjectId']}"
        async with TeamsDoor(tmp_path, BOT_CONSOLE=False, BOT_ADMINS=admin) as door:
            assert (await door.activity(message(connector.url, "deploy web")))[0] == 201
            cards = await connector.wait_for(connector.cards, what="question card")
            iid = actions(card_of(cards[0].body))[0]["data"]["iid"]
            command = message(connector.url, f"hitl extend {iid} 1h", activity_id="msg-extend")
            assert (await door.activity(command))[0] == 201
            await connector.wait_for(lambda: connector.cards()[1:], what="admin reply")
            after_first = await door.state()
            assert (await door.activity(command))[0] == 201
            assert await door.state() == after_first
            assert len(connector.cards()) == 2
    finally:
        await connector.close()
