"""The real bridge in process for the agent-framework adapters, answered as a person would.

``bridge_on(surface, folder)`` serves the app on loopback with an API key and
yields a ``Desk``: a ``bot.client.Bridge`` for the agent, and ``decide`` to
answer one call's question through the console API or a Slack click (the
loopback Slack Web API), found by the call's arguments.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest

from adapters._tool_approval import Approver
from bot.client import Bridge, QuestionObject
from tests.doors._doors import Door
from tests.doors._slack_door import slack_door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient
from tests.e2e._slack import ALICE, CHANNEL, SlackDriver, text_of
from tests.fakes.slack_api import Call, block_actions, buttons, posted_message

CONSOLE_CONVERSATION = "agents"
SURFACES = ("console", "slack")
# The two deploys every framework's tests and every page's example ask approval for.
WEB = {"service": "web", "version": "1.5.0"}
DB = {"service": "db", "version": "17.2"}

T = TypeVar("T")


@dataclass
class _Url:
    url: str


class Desk:
    """Where the agent asks (``bridge``) and where the person answers (``decide``)."""

    def __init__(
        self,
        surface: str,
        door: Door,
        session: aiohttp.ClientSession,
        *,
        channel: str = CHANNEL,
        user: str = ALICE,
    ) -> None:
        self.surface = surface
        self.channel = channel
        self.user = user
        self.door = door
        self.url = f"http://127.0.0.1:{door.port}"
        self.bridge = Bridge(self.url, API_KEY)
        self.console = ConsoleClient(session, self.url)
        self._modals = 0
        self.slack = SlackDriver(session, _Url(self.url), door.fake) if surface == "slack" else None

    @property
    def route(self) -> dict[str, str]:
        conversation = self.channel if self.surface == "slack" else CONSOLE_CONVERSATION
        return {"surface": self.surface, "conversation": conversation}

    def approver(self, **options: Any) -> Approver:
        return Approver(bridge=self.bridge, route=self.route, answerers=["anyone"], **options)

    async def decide(self, arguments: dict[str, Any], *, approve: bool, comment: str = "") -> None:
        """Answer the open question about the call with these arguments."""
        if self.slack is None:
            await self._on_console(arguments, approve=approve, comment=comment)
        else:
            await self._on_slack(arguments, approve=approve, comment=comment)

    async def questions(self, run_ref: str) -> list[QuestionObject]:
        return (await self.bridge.list(run_ref=run_ref)).data

    async def reject_db_approve_web(
        self, running: Awaitable[T], run_id: str
    ) -> tuple[T, list[QuestionObject]]:
        """While ``running`` (a run that calls deploy for DB and WEB) waits, reject DB with a
        comment and approve WEB; its result, and the two questions it asked, one per call."""
        run = asyncio.ensure_future(running)
        await self.decide(DB, approve=False, comment="not during the freeze")
        await self.decide(WEB, approve=True)
        result = await asyncio.wait_for(run, 30)
        asked = await self.questions(run_id)
        assert sorted(q.idempotency_key for q in asked) == [
            f"{run_id}:call_db",
            f"{run_id}:call_web",
        ]
        assert {q.payload["action"] for q in asked} == {"deploy"}
        return result, asked

    async def killed_while_asking(self, running: Awaitable[object]) -> None:
        """Let ``running`` (a console run that calls deploy twice) ask both questions, then end
        it as a dying agent process would: only what it saved survives."""
        first = asyncio.ensure_future(running)
        await self.console.wait(
            CONSOLE_CONVERSATION, lambda feed: len(feed.get("runs", [])) == 2, what="two"
        )
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first

    async def approve_both(self, running: Awaitable[T]) -> T:
        """Approve WEB, then DB, while ``running`` waits on them; its result."""
        run = asyncio.ensure_future(running)
        await self.decide(WEB, approve=True)
        await self.decide(DB, approve=True)
        return await asyncio.wait_for(run, 30)

    async def _on_console(
        self,
        arguments: dict[str, Any],
        *,
        approve: bool = True,
        comment: str = "",
        answer: dict[str, Any] | None = None,
    ) -> None:
        if answer is None:
            answer = {"decision": "approve" if approve else "reject", "comment": comment}
        await answer_about(self.console, CONSOLE_CONVERSATION, arguments, answer)

    async def answer_on_console(self, arguments: dict[str, Any], answer: dict[str, Any]) -> None:
        """Give the open console question about the call with these arguments ``answer``
        (an edit, a response), as the page sends it."""
        await self._on_console(arguments, answer=answer)

    async def _on_slack(self, arguments: dict[str, Any], *, approve: bool, comment: str) -> None:
        assert self.slack is not None
        posted = await self._posted(arguments)
        status, _ = await self._click(posted, "Approve" if approve else "Reject…")
        assert status == 200
        if not approve:
            opened = await self.door.fake.wait_for("views.open", self._modals + 1)
            self._modals += 1
            view = opened[-1].args["view"]
            typed = {"comment": {"answer": {"type": "plain_text_input", "value": comment}}}
            status, _ = await self.slack.submit(view, typed, user=self.user)
            assert status == 200
        await self.door.idle()

    async def _click(self, posted: Call, label: str) -> tuple[int, str]:
        """A click by ``user`` in the question's own channel, as Slack sends it."""
        assert self.slack is not None
        button = next(b for b in buttons(posted.args) if b["text"]["text"] == label)
        action = {
            "type": "button",
            "action_id": button["action_id"],
            "text": button["text"],
            "value": button["value"],
        }
        message = posted_message(posted)
        payload = block_actions(action, user=self.user, message=message, channel=self.channel)
        return await self.slack.interact(payload)

    async def _posted(self, arguments: dict[str, Any]) -> Call:
        """The question message showing every argument value (tests keep them distinct)."""
        values = [str(value) for value in arguments.values()]

        def shows(call: Call) -> bool:
            return bool(buttons(call.args) and call.response) and all(
                value in text_of(call) for value in values
            )

        return (await self.door.fake.wait_for("chat.postMessage", where=shows))[0]


async def answer_about(
    console: ConsoleClient, conversation: str, arguments: dict[str, Any], answer: dict[str, Any]
) -> None:
    """Give the open question in ``conversation`` about the call with these arguments
    ``answer``, once the console shows it."""

    def check(feed: dict[str, Any]) -> dict[str, Any] | None:
        for run in feed.get("runs", []):
            for question in run.get("questions", []):
                if (
                    question["status"] == "outstanding"
                    and question.get("token")
                    and question["payload"].get("arguments") == arguments
                ):
                    return dict(question)
        return None

    question = await console.wait(conversation, check, what=f"an approval of {arguments}")
    await console.answer_ok(question["token"], answer)


async def ship_both_rejecting_db(
    surface: str, folder: Path, run_with_approvals: Callable[..., Awaitable[T]], agent: Any
) -> tuple[T, list[QuestionObject], list[str]]:
    """A framework's ``run_with_approvals`` of ``agent`` (whose model calls deploy for DB and
    WEB), told "ship both" as run ``run-1`` asking on ``surface``, while DB is rejected and WEB
    approved (``Desk.reject_db_approve_web``): its result, its questions, the states it saved."""
    saved: list[str] = []
    async with bridge_on(surface, folder) as desk:
        running = run_with_approvals(
            agent, "ship both", desk.approver(), run_id="run-1", save=saved.append
        )
        result, asked = await desk.reject_db_approve_web(running, "run-1")
    return result, asked, saved


@asynccontextmanager
async def bridge_on(surface: str, folder: Path, **who: str) -> AsyncIterator[Desk]:
    """The real app on loopback, questions routed to ``surface`` (``channel``, ``user``)."""
    env = api_env(f"{surface}:*")
    timeout = aiohttp.ClientTimeout(total=30)
    served = slack_door(folder, **env) if surface == "slack" else Door(folder, **env)
    async with aiohttp.ClientSession(timeout=timeout) as session, served as door:
        desk = Desk(surface, door, session, **who)
        try:
            yield desk
        finally:
            await desk.bridge.close()
