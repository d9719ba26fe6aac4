"""A small loopback ``/v1`` that keeps the agents API's contract, for client tests.

Its state lives apart from its server, so a test can stop the server and
start another on the same port while the questions (and a client's wait)
live on, as they do across a real bridge's restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bot.contract.models import CREATE_QUESTION, CancelRequest, validation_sentence
from tests.e2e._server import free_port

MAX_WAIT = 30
KEY_NAME = web.RequestKey("key_name", str)


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _error(status: int, code: str, message: str, **extra: Any) -> web.Response:
    body = {"error": {"code": code, "message": message}, **extra}
    return web.json_response(body, status=status)


class FakeState:
    """The questions, by id, and a signal per question that wakes its waiters."""

    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys  # bearer key -> key name
        self.questions: dict[str, dict[str, Any]] = {}
        self.owner: dict[str, str] = {}
        self.closed: dict[str, asyncio.Event] = {}
        self.holding: dict[str, asyncio.Event] = {}
        self.by_idempotency: dict[tuple[str, str], tuple[str, str]] = {}
        self.polls: dict[str, int] = {}
        self.created = asyncio.Event()
        self.requests = 0
        self.unavailable = 0  # the next requests a proxy answers 503 for, as in a deploy
        self._ids = itertools.count(1)

    def create(self, owner: str, body: dict[str, Any]) -> dict[str, Any]:
        created = _now()
        question_id = f"q_{next(self._ids)}"
        question = {
            "id": question_id,
            "kind": body["kind"],
            "status": "open",
            "payload": body["payload"],
            "route": (body.get("routes") or [body.get("route")])[0],
            "routes": body.get("routes") or [body["route"]],
            "answerers": body.get("answerers") or ["anyone"],
            "created_at": _stamp(created),
            "expires_at": _stamp(created + timedelta(seconds=body["ttl_seconds"])),
            "closed_at": None,
            "answer": None,
            "answered_by": None,
            "cancel_reason": None,
            "delivery": {"status": "posted", "message": None},
            "metadata": body.get("metadata"),
            "run_ref": body.get("run_ref"),
            "idempotency_key": body["idempotency_key"],
            "policy": body.get("policy") or {},
            "tally": {"approve": [], "reject": []},
            "level": 0,
        }
        self.questions[question_id] = question
        self.owner[question_id] = owner
        self.closed[question_id] = asyncio.Event()
        self.holding[question_id] = asyncio.Event()
        self.created.set()
        return question

    def close(self, question_id: str, status: str, **fields: Any) -> dict[str, Any]:
        question = self.questions[question_id]
        question.update(status=status, closed_at=_stamp(_now()), **fields)
        self.closed[question_id].set()
        return question

    def answer(self, question_id: str, answer: dict[str, Any], *, by: str = "U1") -> None:
        """A person answers, as a chat surface would report it."""
        self.close(
            question_id, "answered", answer=answer, answered_by={"id": by, "name": f"User {by}"}
        )

    async def asked(self, waiting: asyncio.Future[Any] | None = None) -> str:
        """Until a question exists; the newest one's id."""
        await _unless_done(self.created.wait(), waiting)
        return list(self.questions)[-1]

    async def held(self, question_id: str, waiting: asyncio.Future[Any] | None = None) -> None:
        """Until a long-poll on ``question_id`` is being held open.

        Given the ``waiting`` task, a wait that failed before polling raises
        here instead of leaving the test blocked.
        """
        await _unless_done(self.holding[question_id].wait(), waiting)
        self.holding[question_id].clear()


async def _unless_done(signal: Awaitable[Any], waiting: asyncio.Future[Any] | None) -> None:
    """Await ``signal``; if ``waiting`` ends first, re-raise its error instead."""
    pending = asyncio.ensure_future(signal)
    watched: set[asyncio.Future[Any]] = {pending} if waiting is None else {pending, waiting}
    await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
    if not pending.done():
        pending.cancel()
        assert waiting is not None
        waiting.result()
        raise AssertionError("the caller finished before the fake saw what it waited for")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def build_app(state: FakeState) -> web.Application:
    @web.middleware
    async def bearer(request: web.Request, handler: Handler) -> web.StreamResponse:
        state.requests += 1
        if state.unavailable > 0:
            state.unavailable -= 1
            return web.Response(status=503, text="no healthy upstream")
        scheme, _, key = request.headers.get("Authorization", "").partition(" ")
        if scheme != "Bearer" or key not in state.keys:
            return _error(401, "unauthorized", "The API key is missing or wrong.")
        request[KEY_NAME] = state.keys[key]
        return await handler(request)

    def own(request: web.Request) -> dict[str, Any] | None:
        question_id = request.match_info["id"]
        if state.owner.get(question_id) != request[KEY_NAME]:
            return None
        return state.questions[question_id]

    async def create(request: web.Request) -> web.Response:
        try:
            raw = await request.json()
            body = CREATE_QUESTION.validate_python(raw)
        except ValueError as exc:
            message = (
                validation_sentence(exc)
                if isinstance(exc, ValidationError)
                else "The body is not JSON."
            )
            return _error(400, "invalid_request", message)
        wire = body.model_dump(mode="json")
        canonical = json.dumps(wire, sort_keys=True)
        seen = state.by_idempotency.get((request[KEY_NAME], body.idempotency_key))
        if seen is not None:
            if seen[0] != canonical:
                return _error(409, "conflict", "This idempotency key was used with another body.")
            return web.json_response(state.questions[seen[1]], status=200)
        if any(route.conversation == "unseen" for route in body.posted_on):
            return _error(422, "unprocessable", "The bot must be installed there first.")
        question = state.create(request[KEY_NAME], wire)
        state.by_idempotency[(request[KEY_NAME], body.idempotency_key)] = (
            canonical,
            question["id"],
        )
        return web.json_response(
            question, status=201, headers={"Location": f"/v1/questions/{question['id']}"}
        )

    async def get(request: web.Request) -> web.Response:
        question = own(request)
        if question is None:
            return _error(404, "not_found", "No such question.")
        raw_wait = request.query.get("wait", "0")
        if not raw_wait.isdigit() or int(raw_wait) > MAX_WAIT:
            return _error(400, "invalid_request", "wait must be 0 to 30 seconds.")
        state.polls[question["id"]] = state.polls.get(question["id"], 0) + 1
        if question["status"] == "open" and int(raw_wait) > 0:
            state.holding[question["id"]].set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(state.closed[question["id"]].wait(), int(raw_wait))
        return web.json_response(question)

    async def listing(request: web.Request) -> web.Response:
        mine = [q for i, q in state.questions.items() if state.owner[i] == request[KEY_NAME]][::-1]
        if "status" in request.query:
            mine = [q for q in mine if q["status"] == request.query["status"]]
        if "run_ref" in request.query:
            mine = [q for q in mine if q["run_ref"] == request.query["run_ref"]]
        limit = int(request.query.get("limit", "50"))
        start = int(request.query.get("cursor", "0"))
        page = mine[start : start + limit]
        more = start + limit < len(mine)
        return web.json_response(
            {"data": page, "next_cursor": str(start + limit) if more else None}
        )

    async def cancel(request: web.Request) -> web.Response:
        question = own(request)
        if question is None:
            return _error(404, "not_found", "No such question.")
        reason = CancelRequest.model_validate(await request.json()).reason
        if question["status"] != "open":
            return _error(409, "conflict", "The question is already closed.", question=question)
        return web.json_response(state.close(question["id"], "cancelled", cancel_reason=reason))

    app = web.Application(middlewares=[bearer])
    app.router.add_post("/v1/questions", create)
    app.router.add_get("/v1/questions", listing)
    app.router.add_get("/v1/questions/{id}", get)
    app.router.add_post("/v1/questions/{id}/cancel", cancel)
    return app


class FakeBridge:
    """The fake's server on a loopback port that ``restart`` keeps."""

    def __init__(self, state: FakeState) -> None:
        self.state = state
        self.port = free_port()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._runner = web.AppRunner(build_app(self.state), shutdown_timeout=0.1)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
