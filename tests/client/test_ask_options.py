"""``AskOptions``: the create options as one value, built once from a caller's keywords."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.client import (
    ApprovalPayload,
    AskOptions,
    Bridge,
    Policy,
    Route,
    questions_of,
)
from tests.client._fake_api import FakeBridge, FakeState

KEY = "k" * 32


@pytest.fixture
async def bridge() -> AsyncIterator[tuple[Bridge, FakeBridge]]:
    server = FakeBridge(FakeState({KEY: "ci"}))
    await server.start()
    async with Bridge(server.url, KEY) as client:
        yield client, server
    await server.stop()


def test_the_looser_forms_become_one_typed_value() -> None:
    options = AskOptions.of(
        route=["slack:C1/1700.1", {"surface": "teams", "conversation": "19:ops"}],
        answerers=["U1", "U2"],
        policy={"quorum": 2},
        allow=["approve", "reject", "edit"],
    )
    assert options.route == (
        Route(surface="slack", conversation="C1", thread="1700.1"),
        Route(surface="teams", conversation="19:ops"),
    )
    assert options.answerers == ("U1", "U2")
    assert options.policy == Policy(quorum=2)
    assert options.allow == ("approve", "reject", "edit")
    fields = options.create_fields()
    assert set(fields) == {"routes", "answerers", "policy", "allow"}
    one = AskOptions.of(route="console:ops", ttl_seconds=60).create_fields()
    assert one == {"route": Route(surface="console", conversation="ops"), "ttl_seconds": 60}
    with pytest.raises(ValueError, match="surface:conversation"):
        AskOptions.of(route="no-colon")


async def test_create_with_the_value_sends_what_the_keywords_send(
    bridge: tuple[Bridge, FakeBridge],
) -> None:
    """The same idempotency key with the same body is the same question: a different body
    would be refused as a conflict, so both ways must send the very same request."""
    client, server = bridge
    by_keywords = await client.ask(
        "Ship?",
        route=["slack:C1", "console:ops"],
        idempotency_key="same",
        answerers=["U1"],
        ttl_seconds=120,
        metadata={"ticket": 7, "note": None},
        run_ref="r1",
    )
    options = AskOptions.of(
        route=["slack:C1", "console:ops"],
        answerers=["U1"],
        ttl_seconds=120,
        metadata={"ticket": 7, "note": None},
        run_ref="r1",
    )
    by_value = await client.create(questions_of("Ship?"), options, idempotency_key="same")
    assert by_value.id == by_keywords.id
    assert len(server.state.questions) == 1


async def test_create_takes_its_kind_from_the_payload(bridge: tuple[Bridge, FakeBridge]) -> None:
    client, server = bridge
    payload = ApprovalPayload(action="deploy", summary="Deploy web", arguments={}, risk="high")
    asked = await client.create(
        payload, AskOptions.of(route="console:ops", answerers=["U1"], allow=["approve", "reject"])
    )
    stored = server.state.questions[asked.id]
    assert stored["kind"] == "approval"
    assert stored["answerers"] == ["U1"]
    with pytest.raises(ValueError, match="allow"):
        await client.create(
            questions_of("Ship?"), AskOptions.of(route="console:ops", allow=["approve"])
        )
