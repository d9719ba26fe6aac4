"""A quorum on Teams: the first approval returns the card with the tally, the second closes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._teams import BOB, TeamsBotApp, actions, card_of, execute, message, texts
from tests.fakes.bf_connector import FakeConnector

pytestmark = pytest.mark.e2e

CAROL = {"id": "29:carol", "name": "Carol", "aadObjectId": "aad-carol"}


async def test_a_quorum_of_two_on_teams(tmp_path: Path) -> None:
    connector = await FakeConnector().start()
    bot = await TeamsBotApp(
        tmp_path / "bot",
        BOT_ANYONE_MAY_ANSWER=True,
        BOT_POLICIES=json.dumps({"approval": {"quorum": 2}}),
    ).start()
    try:
        status, _ = await bot.post(message(connector.url, "deploy web"))
        assert status == 201
        first = (await connector.wait_for(connector.cards, what="question card"))[0]
        staging = actions(card_of(first.body))[0]
        status, _ = await bot.post(execute(connector.url, {**staging["data"]}))
        assert status == 200
        calls = await connector.wait_for(lambda: connector.cards()[1:], what="approval card")
        approval = card_of(calls[0].body)
        assert "0 of 2 approved" in texts(approval)
        approve = next(a for a in actions(approval) if a["title"] == "Approve")
        data: dict[str, Any] = {**approve["data"], "comment": ""}
        status, reply = await bot.post(execute(connector.url, data, who=BOB))
        assert status == 200
        assert "1 of 2 approved: @Bob" in texts(reply["value"]) and "actions" in reply["value"]
        status, reply = await bot.post(execute(connector.url, data, who=BOB))
        assert any("You already answered" in t for t in texts(reply["value"]))
        status, reply = await bot.post(execute(connector.url, data, who=CAROL))
        assert any(t.startswith("Approved by Carol at ") for t in texts(reply["value"]))
        final = await connector.wait_for(
            lambda: [t for t in connector.texts() if t.startswith("Deployed")], what="final reply"
        )
        assert len(final) == 1
    finally:
        await bot.close()
        await connector.close()
