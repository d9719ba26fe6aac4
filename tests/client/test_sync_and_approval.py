"""The blocking twin and the require_approval decorator, against the loopback fake.

The fake serves on the test's loop, so each blocking call runs in a worker
thread while the loop goes on serving it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.client import (
    Bridge,
    Cancelled,
    Expired,
    Question,
    QuestionObject,
    Rejected,
    SyncBridge,
    SyncQuestion,
    require_approval,
)
from tests.client._fake_api import FakeBridge, FakeState

KEY = "k" * 32
ROUTE = "slack:C123"


@pytest.fixture
async def fake() -> AsyncIterator[FakeBridge]:
    server = FakeBridge(FakeState({KEY: "ci"}))
    await server.start()
    yield server
    await server.stop()


def _only_question(fake: FakeBridge) -> str:
    (question_id,) = fake.state.questions
    return question_id


async def _answer_when_held(
    fake: FakeBridge, answer: dict[str, Any], running: asyncio.Future[Any]
) -> None:
    question_id = await fake.state.asked(running)
    await fake.state.held(question_id, running)
    fake.state.answer(question_id, answer)


async def test_the_sync_twin_asks_waits_and_closes(fake: FakeBridge) -> None:
    """SyncBridge blocks on a private loop; the answer arrives as with Bridge."""
    sync = SyncBridge(fake.url, KEY)
    question = await asyncio.to_thread(sync.ask, "Ship?", route=ROUTE)
    assert question.object.status == "open"
    waiting = asyncio.ensure_future(asyncio.to_thread(question.wait, 60))
    await fake.state.held(question.id, waiting)
    fake.state.answer(question.id, {"answers": {"Ship?": "yes"}})
    closed = await waiting
    assert isinstance(closed, QuestionObject)
    assert closed.answer == {"answers": {"Ship?": "yes"}}
    page = await asyncio.to_thread(sync.list)
    assert [q.id for q in page.data] == [question.id]
    await asyncio.to_thread(sync.close)
    assert sync._loop.closed


async def test_approved_async_function_runs_once(fake: FakeBridge) -> None:
    """On approve the wrapped coroutine runs exactly once, after the approval."""
    calls: list[int] = []
    async with Bridge(fake.url, KEY) as bridge:

        @require_approval(route=ROUTE, answerers=["U1"], bridge=bridge, risk="high")
        async def deploy(version: int, *, env: str = "prod") -> str:
            calls.append(version)
            return f"deployed {version} to {env}"

        running = asyncio.ensure_future(deploy(12))
        await _answer_when_held(fake, {"decision": "approve"}, running)
        assert await running == "deployed 12 to prod"
    assert calls == [12]
    asked = fake.state.questions[_only_question(fake)]
    assert asked["kind"] == "approval"
    assert asked["answerers"] == ["U1"]
    assert asked["payload"]["arguments"] == {"version": 12, "env": "prod"}
    assert asked["payload"]["action"].endswith("deploy")


async def test_rejected_sync_function_never_runs(fake: FakeBridge) -> None:
    """On reject the plain function never runs and Rejected carries the comment."""
    calls: list[str] = []

    @require_approval(route=ROUTE, answerers=["U1"], url=fake.url, api_key=KEY)
    def drop_table(name: str) -> None:
        calls.append(name)

    running = asyncio.ensure_future(asyncio.to_thread(drop_table, "users"))
    await _answer_when_held(fake, {"decision": "reject", "comment": "not on a Friday"}, running)
    with pytest.raises(Rejected) as caught:
        await running
    assert caught.value.comment == "not on a Friday"
    assert calls == []


async def test_approved_sync_function_runs_once(fake: FakeBridge) -> None:
    """A plain function with a SyncBridge runs once on approve."""
    calls: list[str] = []
    sync = SyncBridge(fake.url, KEY)

    @require_approval(route=ROUTE, answerers=["U1"], bridge=sync, action="rotate")
    def rotate(key: object) -> str:
        calls.append(str(key))
        return "rotated"

    running = asyncio.ensure_future(asyncio.to_thread(rotate, object()))
    await _answer_when_held(fake, {"decision": "approve"}, running)
    assert await running == "rotated"
    await asyncio.to_thread(sync.close)
    assert len(calls) == 1
    payload = fake.state.questions[_only_question(fake)]["payload"]
    assert payload["action"] == "rotate"
    assert payload["arguments"]["key"].startswith("<object object")


@pytest.mark.parametrize(("status", "error"), [("expired", Expired), ("cancelled", Cancelled)])
async def test_an_approval_closed_otherwise_raises_and_never_runs(
    fake: FakeBridge, status: str, error: type[Exception]
) -> None:
    """Expired and Cancelled are raised as such; the function stays unrun."""
    calls: list[int] = []
    async with Bridge(fake.url, KEY) as bridge:

        @require_approval(route=ROUTE, answerers=["U1"], bridge=bridge)
        async def deploy() -> None:
            calls.append(1)

        running = asyncio.create_task(deploy())
        question_id = await fake.state.asked(running)
        await fake.state.held(question_id, running)
        fake.state.close(question_id, status, cancel_reason="bot left the channel")
        with pytest.raises(error):
            await running
    assert calls == []


def test_a_bridge_of_the_wrong_kind_is_refused_at_decoration() -> None:
    """An async function needs a Bridge, a plain one a SyncBridge; said at once."""
    sync = SyncBridge("http://127.0.0.1:9", KEY)
    try:
        with pytest.raises(TypeError, match="is async"):

            @require_approval(route=ROUTE, answerers=["U1"], bridge=sync)
            async def later() -> None:
                pass
    finally:
        sync.close()
    with pytest.raises(ValueError, match="url= and api_key="):
        require_approval(route=ROUTE, answerers=["U1"])


def test_the_sync_twin_has_each_bridge_method_with_its_parameters_and_docs() -> None:
    """SyncBridge's methods are made from Bridge's: the same parameters and docstrings,
    a SyncQuestion where Bridge gives a Question, and they block (no coroutine)."""
    for name in ("ask", "approve", "form", "create", "question", "get", "cancel", "list"):
        made, source = getattr(SyncBridge, name), getattr(Bridge, name)
        assert not inspect.iscoroutinefunction(made), name
        assert made.__doc__ == source.__doc__, name
        ours, theirs = inspect.signature(made), inspect.signature(source)
        assert ours.parameters == theirs.parameters, name
        expected = theirs.return_annotation
        if str(expected).startswith("Question["):
            expected = f"Sync{expected}"
        assert ours.return_annotation == expected, name
    for name in ("refresh", "cancel", "wait"):
        made, source = getattr(SyncQuestion, name), getattr(Question, name)
        assert inspect.signature(made) == inspect.signature(source), name
