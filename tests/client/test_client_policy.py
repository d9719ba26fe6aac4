"""The client's ``approve`` takes a policy: checked locally, sent, and shown back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.client import Bridge, Policy, Question, QuestionObject
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


async def deploy(client: Bridge, **options: Any) -> Question[QuestionObject]:
    """The same high-risk deploy approval every test here asks, with ``options`` its own."""
    return await client.approve("deploy", "Deploy", arguments={}, risk="high", **options)


async def test_a_policy_is_sent_with_the_approval(bridge: tuple[Bridge, FakeBridge]) -> None:
    client, server = bridge
    asked = await deploy(
        client,
        route=ROUTE,
        answerers=["U1", "U2"],
        policy={"quorum": 2, "requester_may_answer": False},
    )
    stored = server.state.questions[asked.id]
    assert stored["policy"]["quorum"] == 2 and stored["policy"]["requester_may_answer"] is False
    again = await deploy(client, route=ROUTE, answerers=["U1"], policy=Policy(on_expire="reject"))
    assert server.state.questions[again.id]["policy"]["on_expire"] == "reject"


async def test_an_impossible_quorum_is_refused_before_sending(
    bridge: tuple[Bridge, FakeBridge],
) -> None:
    client, server = bridge
    with pytest.raises(ValueError, match="distinct answerers"):
        await deploy(client, route=ROUTE, answerers=["U1"], policy={"quorum": 2})
    assert server.state.questions == {}


async def test_a_list_of_routes_posts_on_each(bridge: tuple[Bridge, FakeBridge]) -> None:
    """``route=[...]`` is sent as ``routes``; the object shows them, ``route`` the first."""
    client, server = bridge
    asked = await deploy(
        client, route=["slack:C1", {"surface": "teams", "conversation": "19:ops"}], answerers=["U1"]
    )
    stored = server.state.questions[asked.id]
    assert [r["surface"] for r in stored["routes"]] == ["slack", "teams"]
    assert [r.conversation for r in asked.object.routes] == ["C1", "19:ops"]
    assert asked.object.route.conversation == "C1"
    with pytest.raises(ValueError, match="twice"):
        await deploy(client, route=["slack:C1", "slack:C1"], answerers=["U1"])
