"""API questions in the one lifecycle: expiry, admin commands, no kernel resume (fixed clock)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from bot.admin import AdminService
from bot.api import API_QUESTIONS, ApiSettings, serve_api
from bot.contract.models import CREATE_QUESTION
from bot.questions.records import ApiKey, RunStatus
from bot.service.answering.outcomes import Responder
from bot.stores.ports import Stores
from bot.testing import FixedClock, RecordingSurface
from bot.webhooks import WebhookSettings
from tests.support import HarnessFactory

KEY = ApiKey("ci", "", ("*",), key_id="key_ci")
ADMIN = Responder("console:root", "Root", is_admin=True)


def body(idempotency_key: str) -> dict[str, Any]:
    return {
        "idempotency_key": idempotency_key,
        "kind": "ask_user",
        "payload": {"questions": [{"question": "Which env?", "options": []}]},
        "route": {"surface": "console", "conversation": "c1"},
        "ttl_seconds": 60,
    }


async def test_an_api_question_expires_wakes_its_waiter_and_never_resumes_a_turn(
    harness: HarnessFactory, sqlite_stores: Stores, clock: FixedClock
) -> None:
    """The sweeper expires it like any question; the carrier run stays remote, no model call."""
    h = harness(sqlite_stores, [])
    console = RecordingSurface(name="console")
    h.service.add_surface(console)
    app = web.Application()
    stop = serve_api(app, ApiSettings(), WebhookSettings(), service=h.service)
    questions = app[API_QUESTIONS]
    raw = body("expiring")
    created = await questions.create(KEY, CREATE_QUESTION.validate_python(raw), raw)
    await h.service.wait_idle()
    assert created.created and len(console.questions) == 1
    waiting = asyncio.create_task(questions.get(KEY, created.question["id"], wait=30))
    await asyncio.sleep(0)  # the waiter registers
    clock.advance(61)
    assert await h.service.sweep() == 1
    expired = await asyncio.wait_for(waiting, 5)
    assert expired["status"] == "expired" and expired["answer"] is None
    await h.service.wait_idle()
    assert h.provider.calls == []  # nothing resumed a turn
    views = await sqlite_stores.api.get(created.question["id"])
    assert views is not None
    carrier = await sqlite_stores.runs.get(views.question.run_id)
    assert carrier is not None and carrier.status is RunStatus.REMOTE
    await stop()


async def test_admin_commands_list_and_cancel_api_questions(
    harness: HarnessFactory, sqlite_stores: Stores
) -> None:
    """pending names the key as who asked; cancel closes it as for any question."""
    h = harness(sqlite_stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    app = web.Application()
    stop = serve_api(app, ApiSettings(), WebhookSettings(), service=h.service)
    raw = body("administered")
    created = await app[API_QUESTIONS].create(KEY, CREATE_QUESTION.validate_python(raw), raw)
    admin = AdminService(
        stores=sqlite_stores,
        admins=(),
        max_ttl_seconds=86_400,
        runs=h.service,
        clock=h.service.clock,
    )
    page = await admin.handle("pending", who=ADMIN)
    items = getattr(page, "items", ())
    assert [item.requester for item in items] == ["api:ci"]
    question_id = created.question["id"]
    await admin.handle(f"cancel {question_id} not needed", who=ADMIN)
    got = await app[API_QUESTIONS].get(KEY, question_id)
    assert got["status"] == "cancelled" and got["cancel_reason"] == "not needed"
    await h.service.wait_idle()
    assert h.provider.calls == []
    await stop()
