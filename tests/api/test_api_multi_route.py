"""``routes`` on ``POST /v1/questions``: exactly one of route and routes, each route checked
as ``route`` is, and the object showing every route (in process, console routes)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_api_refusals import KEYS, ask, call, code
from tests.doors._doors import Door, Logs

C1 = {"surface": "console", "conversation": "c1"}
C2 = {"surface": "console", "conversation": "c2"}


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    async with Door(tmp_path, BOT_API_KEYS=KEYS) as door:
        yield door


def routed(routes: Any, **more: Any) -> dict[str, Any]:
    body = ask("routed", **more)
    del body["route"]
    return {**body, "routes": routes}


async def test_route_and_routes_are_checked_and_a_refusal_changes_nothing(door: Door) -> None:
    cases: list[tuple[dict[str, Any], int, str, str]] = [
        ({**routed([C1, C2]), "route": C1}, 400, "invalid_request", "exactly one"),
        ({k: v for k, v in ask().items() if k != "route"}, 400, "invalid_request", "exactly one"),
        (routed([]), 400, "invalid_request", "at least one"),
        (routed([C1, C2, C1]), 400, "invalid_request", "twice"),
        (routed([C1, {"surface": "slack", "conversation": "C1"}]), 403, "forbidden", "slack:C1"),
        (
            routed([C1, {"surface": "teams", "conversation": "19:never-seen"}]),
            422,
            "unprocessable",
            "Teams conversation",
        ),
        (routed([C1, C2]), 422, "unprocessable", "console route first"),
    ]
    before = await door.state()
    with Logs() as logs:
        for body, status, expected, words in cases:
            got, answer = await call(door, "POST", "/v1/questions", body)
            assert (got, code(answer)) == (status, expected), (body, answer)
            message = answer["error"]["message"]
            assert words in message and message.endswith(".") and "\n" not in message, message
    logs.assert_clean()
    assert await door.state() == before


async def test_a_question_with_one_route_shows_it_as_its_only_route(door: Door) -> None:
    status, single = await call(door, "POST", "/v1/questions", ask("single"))
    assert status == 201 and single["routes"] == [single["route"]]
