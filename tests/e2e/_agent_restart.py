"""An agent adapter's approval across a SIGKILL of a real bridge, the same for every adapter.

The Agents SDK and Pydantic AI adapters both ask through ``Approver`` and save their run
as a string; what differs is how a run starts and how a restarted agent finds its pending
calls again in what it saved. Those two are passed in; the kill, the re-ask and the
answer are written here once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

import aiohttp

from adapters._tool_approval import Approver, ToolCall
from bot.client import Bridge
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class RunWithApprovals(Protocol[R_co]):
    """An adapter's ``run_with_approvals`` with its agent and prompt given."""

    def __call__(
        self, approver: Approver, *, run_id: str, save: Callable[[str], object]
    ) -> Coroutine[Any, Any, R_co]: ...


async def approved_across_a_bridge_kill(
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    *,
    run_id: str,
    run: RunWithApprovals[R],
    pending_in: Callable[[str], Awaitable[list[ToolCall]]],
) -> R:
    """Start ``run``, SIGKILL and restart the bridge while its question is open, ask again
    for the calls ``pending_in`` finds in the saved run (the same question comes back), and
    approve it on the console: the run's result, once it is the run's one answered question."""
    server = await start_bot(**api_env("console:*"), **OPERATOR)
    console = ConsoleClient(http, server.url)
    saved: list[str] = []
    async with Bridge(server.url, API_KEY) as bridge:
        approver = Approver(bridge=bridge, route="console:agents", answerers=["anyone"])
        running = asyncio.create_task(run(approver, run_id=run_id, save=saved.append))
        asked = await console.outstanding("agents", "approval")
        server.kill()
        await server.restart()
        # What a restarted agent would do from what it saved: the same question comes back.
        [again] = await approver.ask(run_id, await pending_in(saved[0]))
        still = await console.outstanding("agents", "approval")
        assert still["interrupt_id"] == asked["interrupt_id"]
        await console.answer_ok(still["token"], APPROVE)
        result = await asyncio.wait_for(running, 60)
        page = await bridge.list(run_ref=run_id)
    assert [q.id for q in page.data] == [again.id]
    assert page.data[0].status == "answered"
    return result
