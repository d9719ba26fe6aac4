"""The client's ``approve`` takes a policy: checked locally, sent, and shown back."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.client import Bridge, Policy
from tests.client._fake_api import FakeBridge, FakeState

KEY = "k" * 32
ROUTE = "console:ops"


@pytest.fixture
async def bridge() -> AsyncIterator[tuple[Bridge, FakeBridge]]:
    server = FakeBridge(FakeState({KEY: "ci"}))
    await server.start()
    async with Bridge(server.url, KEY) as client:
        yield client, server
    await server.stop()


async def test_a_policy_is_sent_with_the_approval(bridge: tuple[Bridge, FakeBridge]) -> None:
    client, server = bridge
    asked = await client.approve(
        "deploy", "Deploy", arguments={}, risk="high", route=ROUTE,
        answerers=["U1", "U2"], policy={"quorum": 2, "requester_may_answer": False},
    )  # fmt: skip
    stored = server.state.questions[asked.id]
    assert stored["policy"]["quorum"] == 2 and stored["policy"]["requester_may_answer"] is False
    again = await client.approve(
        "deploy", "Deploy", arguments={}, risk="high", route=ROUTE,
        answerers=["U1"], policy=Policy(on_expire="reject"),
    )  # fmt: skip
    assert server.state.questions[again.id]["policy"]["on_expire"] == "reject"


async def test_an_impossible_quorum_is_refused_before_sending(
    bridge: tuple[Bridge, FakeBridge],
) -> None:
    client, server = bridge
    with pytest.raises(ValueError, match="distinct answerers"):
        await client.approve(
            "deploy", "Deploy", arguments={}, risk="high", route=ROUTE,
            answerers=["U1"], policy={"quorum": 2},
        )  # fmt: skip
    assert server.state.questions == {}


async def test_a_list_of_routes_posts_on_each(bridge: tuple[Bridge, FakeBridge]) -> None:
    """``route=[...]`` is sent as ``routes``; the object shows them, ``route`` the first."""
    client, server = bridge
    asked = await client.approve(
        "deploy", "Deploy", arguments={}, risk="high",
        route=["slack:C1", {"surface": "teams", "conversation": "19:ops"}], answerers=["U1"],
    )  # fmt: skip
    stored = server.state.questions[asked.id]
    assert [r["surface"] for r in stored["routes"]] == ["slack", "teams"]
    assert [r.conversation for r in asked.object.routes] == ["C1", "19:ops"]
    assert asked.object.route.conversation == "C1"
    with pytest.raises(ValueError, match="twice"):
        await client.approve(
            "deploy", "Deploy", arguments={}, risk="high",
            route=["slack:C1", "slack:C1"], answerers=["U1"],
        )  # fmt: skip
