"""Helpers for the console tests: a driven console and an event-stream reader."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient

from adapters.console import ConsoleSurface
from bot.contract.answers import answer_of
from bot.contract.payloads import payload_of
from bot.interactions.approval import APPROVAL
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.service.running.runs import RunService
from bot.stores import Closing, Stores
from bot.testing import FixedClock
from tests.support import steps

CID = "c-test-1"
WHICH_ENV = "Which environment should I deploy web in?"
DEPLOYED = "Deployed web 1.5.0 to staging (was 1.4.2). Health checks green."
JSON = {"Content-Type": "application/json"}


@dataclass
class Console:
    """One mounted console and the service behind it, driven over HTTP."""

    client: TestClient[web.Request, web.Application]
    service: RunService
    surface: ConsoleSurface
    clock: FixedClock

    async def send(
        self, text: str, *, cid: str = CID, headers: dict[str, str] | None = None
    ) -> ClientResponse:
        response = await self.client.post(
            f"/api/conversations/{cid}/messages", json={"text": text}, headers=headers
        )
        await self.service.wait_idle()
        return response

    async def answer(
        self, token: str, answer: Any, *, headers: dict[str, str] | None = None
    ) -> ClientResponse:
        response = await self.client.post(
            "/api/answer", json={"token": token, "answer": answer}, headers=headers
        )
        await self.service.wait_idle()
        return response

    async def feed(
        self, cid: str = CID, *, headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        response = await self.client.get(f"/api/conversations/{cid}", headers=headers)
        assert response.status == 200
        body: dict[str, Any] = await response.json()
        return body

    async def questions(self, cid: str = CID) -> list[dict[str, Any]]:
        return [q for run in (await self.feed(cid))["runs"] for q in run["questions"]]

    async def open_question(self, cid: str = CID) -> dict[str, Any]:
        (question,) = [q for q in await self.questions(cid) if q["status"] == "outstanding"]
        return question


ConsoleFactory = Callable[..., Awaitable[Console]]


async def next_event(response: ClientResponse) -> tuple[str, str]:
    """Read the stream up to the next named event: (event, data); comments skipped."""
    event, data = "", ""
    while True:
        raw = await response.content.readline()
        if not raw:
            raise EOFError("the event stream ended before an event arrived")
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif not line and event:
            return event, data


async def within(seconds: float, work: Awaitable[Any]) -> Any:
    """Bound a wait so a broken stream fails the test instead of hanging it."""
    return await asyncio.wait_for(work, seconds)


# Written into an approval's summary: markup and a control that would turn the line around.
HOSTILE = "<img src=x onerror=alert(1)> deploy \u202eesrever"
HOSTILE_SHOWN = "<img src=x onerror=alert(1)> deploy ⟨U+202E⟩esrever"


@dataclass(frozen=True)
class Past:
    """A question closed ``day`` days after the epoch's first (1970-01-02 is day 1)."""

    n: int
    status: QuestionStatus
    surface: str
    requester: str
    by: str
    decision: str = ""
    day: int = 1
    summary: str = ""


async def closed_question(stores: Stores, past: Past) -> str:
    """``past`` asked and closed in ``stores`` through the lifecycle; its id."""
    run = RunRecord(
        run_id=f"run-past-{past.n}",
        scope=f"{past.surface}:ops",
        surface=past.surface,
        requester=past.requester,
        text="go",
        created_at=1.0,
        conversation={"key": f"past-{past.n}"},
    )
    await steps(stores).start(run)
    at = 86400.0 * past.day + 60 + past.n
    # An expiry closes only a question that is overdue by then.
    expires_at = at if past.status is QuestionStatus.EXPIRED else 4e9
    payload = {"action": "deploy", "summary": past.summary or f"deploy web {past.n}"}
    question = Question(
        interrupt_id=f"q-past-{past.n}",
        run_id=run.run_id,
        scope=run.scope,
        name=APPROVAL,
        tool_call_id=f"c{past.n}",
        checkpoint_id=f"{run.run_id}:1",
        payload=payload_of(APPROVAL, payload),
        issued_at=1000.0,
        expires_at=expires_at,
    )
    await steps(stores).issue(question)
    stored = {"decision": past.decision} if past.decision else None
    answer = answer_of(APPROVAL, past.status.value, stored)
    closing = Closing(past.status, by=past.by, at=at, answer=answer, by_id=past.by)
    assert await steps(stores).spend(question.interrupt_id, closing)
    return question.interrupt_id
