"""The console's admin panel and its JSON API, over HTTP on a loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from adapters.console import ConsoleSurface, mount_console
from bot.admin import AdminService
from bot.approval import approval_registration, approval_tool
from bot.compose import build_agent
from bot.demo import Fleet, demo_script
from bot.human.factory import ask_user_registration
from bot.human.tokens import TokenSigner
from bot.providers.scripted import ScriptedProvider
from bot.runs import RunService
from bot.stores.ports import Stores
from bot.testing import FixedClock
from bot.web import ADMIN_SERVICE, RUN_SERVICE
from tests.adapters.console.console_support import WHICH_ENV, Console

MAX_TTL = 2 * 24 * 3600.0


@pytest.fixture
async def console(
    sqlite_stores: Stores, clock: FixedClock, signer: TokenSigner
) -> AsyncIterator[Console]:
    agent, capability = build_agent(
        provider=ScriptedProvider(demo_script),
        stores=sqlite_stores,
        signer=signer,
        clock=clock,
        tools=[*Fleet().tools(), approval_tool()],
        registrations=[ask_user_registration(), approval_registration()],
    )
    service = RunService(agent=agent, capability=capability, stores=sqlite_stores, clock=clock)
    surface = ConsoleSurface()
    service.add_surface(surface)
    app = web.Application()
    mount_console(app, surface, password=None)
    app[RUN_SERVICE] = service
    app[ADMIN_SERVICE] = AdminService(
        stores=sqlite_stores, admins=(), max_ttl_seconds=MAX_TTL, runs=service, clock=clock
    )
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        yield Console(client, service, surface, clock)
    finally:
        await client.close()
        await service.drain(5.0)


async def admin(console: Console, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    response = await console.client.request(method, f"/api/admin/{path}", json=body)
    await console.service.wait_idle()
    return response.status, await response.json()


async def test_the_panel_lists_pending_and_extends_resends_and_cancels(console: Console) -> None:
    """Every panel action goes through bot.admin and shows on the conversation."""
    await console.send("deploy web")
    asked = await console.open_question()
    qid = asked["interrupt_id"]

    status, page = await admin(console, "GET", "pending")
    assert status == 200 and page["kind"] == "PendingPage"
    (item,) = page["items"]
    assert item["question"]["interrupt_id"] == qid
    assert item["question"]["requester"] == "console:operator"
    assert item["question"]["message_ref"] == {"conversation": "c-test-1"}

    status, shown = await admin(console, "GET", f"questions/{qid}")
    assert status == 200 and shown["record"]["status"] == "outstanding"
    assert [d["kind"] for d in shown["deliveries"]] == ["publish"]

    status, extended = await admin(console, "POST", f"questions/{qid}/extend", {"duration": "1h"})
    assert status == 200
    assert extended["expires_at"] == asked["expires_at"] + 3600
    redrawn = await console.open_question()
    assert redrawn["expires_at"] == asked["expires_at"] + 3600
    assert redrawn["token"] != asked["token"]  # re-derived with the new exp

    status, refused = await admin(console, "POST", f"questions/{qid}/extend", {"duration": "3d"})
    assert (status, refused["kind"]) == (422, "TooLong")

    status, resent = await admin(console, "POST", f"questions/{qid}/resend", {})
    assert (status, resent["kind"]) == (200, "Resent")

    body = {"reason": "wrong service"}
    status, done = await admin(console, "POST", f"questions/{qid}/cancel", body)
    assert (status, done["reason"]) == (200, "wrong service")
    closed = next(q for q in await console.questions() if q["interrupt_id"] == qid)
    assert closed["closed_text"].startswith("Cancelled by console operator")
    late = await console.answer(redrawn["token"], {"answers": {WHICH_ENV: "staging"}})
    assert late.status == 409

    status, again = await admin(console, "POST", f"questions/{qid}/cancel", {})
    assert (status, again["kind"]) == (409, "NotOpen")
    status, stats = await admin(console, "GET", "stats")
    assert status == 200 and stats["stats"]["cancelled"] == 1
    status, audit = await admin(console, "GET", f"runs/{shown['record']['run_id']}/audit")
    kinds = [e["kind"] for e in audit["events"]]
    assert status == 200 and {"extended", "resent", "cancelled"} <= set(kinds)
    assert all(e["actor"] == "console:operator" for e in audit["events"] if e["kind"] == "admin")


async def test_the_admin_api_keeps_the_consoles_guards_and_serves_its_page(
    console: Console,
) -> None:
    """A form post is refused like any console POST; unknown ids are 404; /admin is served."""
    refused = await console.client.post(
        "/api/admin/questions/x/cancel", data="reason=x", headers={"Content-Type": "text/plain"}
    )
    assert refused.status == 403
    status, missing = await admin(console, "GET", "questions/int_missing")
    assert (status, missing["kind"]) == (404, "NotFound")
    page = await console.client.get("/admin")
    assert page.status == 200
    assert "/static/admin.js" in await page.text()
    script = await console.client.get("/static/admin.js")
    assert script.status == 200 and "/api/admin/pending" in await script.text()
