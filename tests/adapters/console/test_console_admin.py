"""The console's admin panel and its JSON API, over HTTP on a loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import encode_basic_auth, web
from aiohttp.test_utils import TestClient, TestServer

from adapters.console import ConsoleSurface, mount_console
from bot.admin import ADMIN_SERVICE, AdminService
from bot.app.compose import build_agent
from bot.demo import Fleet, demo_script
from bot.human.factory import ask_user_registration
from bot.human.tokens import TokenSigner
from bot.interactions.approval import approval_registration, approval_tool
from bot.providers.scripted import ScriptedProvider
from bot.service.policy import RequesterOrApprovers
from bot.service.runs import RUN_SERVICE, RunService
from bot.serving import ALLOWED_HOSTS, SIGN_IN, AllowedHosts, SignIn, http_guards
from bot.stores.ports import Stores
from bot.testing import FixedClock
from tests.adapters.console.console_support import WHICH_ENV, Console
from tests.e2e._server import free_port

MAX_TTL = 2 * 24 * 3600.0
USERS = {"ana": "ana's long console password", "bo": "bo's long console password"}


@pytest.fixture
async def make_console(
    sqlite_stores: Stores, clock: FixedClock, signer: TokenSigner
) -> AsyncIterator[Callable[..., Awaitable[Console]]]:
    """The console as create_app mounts it (guards, sign-in), with an AdminService."""
    opened: list[Console] = []

    async def make(*, users: dict[str, str] | None = None) -> Console:
        agent, capability = build_agent(
            provider=ScriptedProvider(demo_script),
            stores=sqlite_stores,
            signer=signer,
            clock=clock,
            tools=[*Fleet().tools(), approval_tool()],
            registrations=[ask_user_registration(), approval_registration()],
        )
        policy = RequesterOrApprovers()
        service = RunService(
            agent=agent, capability=capability, stores=sqlite_stores, clock=clock, policy=policy
        )
        surface = ConsoleSurface()
        service.add_surface(surface)
        port = free_port()
        allowed = AllowedHosts.loopback(port)
        app = web.Application(middlewares=http_guards(allowed=allowed, body_timeout=5.0))
        app[ALLOWED_HOSTS] = allowed
        app[SIGN_IN] = SignIn(users, operator="Ana")
        mount_console(app, surface, policy=policy)
        app[RUN_SERVICE] = service
        app[ADMIN_SERVICE] = AdminService(
            stores=sqlite_stores,
            admins=["console:ana"],
            max_ttl_seconds=MAX_TTL,
            runs=service,
            clock=clock,
        )
        client = TestClient(TestServer(app, host="127.0.0.1", port=port))
        await client.start_server()
        console = Console(client, service, surface, clock)
        opened.append(console)
        return console

    yield make
    for console in opened:
        await console.client.close()
        await console.service.drain(5.0)


@pytest.fixture
async def console(make_console: Callable[..., Awaitable[Console]]) -> Console:
    return await make_console()


async def admin(
    console: Console, method: str, path: str, body: Any = None, *, user: str = ""
) -> tuple[int, Any]:
    headers = {"Authorization": encode_basic_auth(user, USERS[user])} if user else {}
    response = await console.client.request(
        method, f"/api/admin/{path}", json=body, headers=headers
    )
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
    assert item["question"]["requester"] == "console:Ana"
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
    assert closed["closed_text"].startswith("Cancelled by Ana")
    # The admin's reason is on the page, not only in the audit.
    assert closed["closed_text"].endswith("Reason: wrong service")
    late = await console.answer(redrawn["token"], {"answers": {WHICH_ENV: "staging"}})
    assert late.status == 409

    status, again = await admin(console, "POST", f"questions/{qid}/cancel", {})
    assert (status, again["kind"]) == (409, "NotOpen")
    status, stats = await admin(console, "GET", "stats")
    assert status == 200 and stats["stats"]["cancelled"] == 1
    status, audit = await admin(console, "GET", f"runs/{shown['record']['run_id']}/audit")
    kinds = [e["kind"] for e in audit["events"]]
    assert status == 200 and {"extended", "resent", "cancelled"} <= set(kinds)
    assert all(e["actor"] == "console:Ana" for e in audit["events"] if e["kind"] == "admin")


async def test_the_admin_api_keeps_the_consoles_guards_and_serves_its_page(
    console: Console,
) -> None:
    """A form post or another site's POST is refused as on any console route; /admin is served."""
    refused = await console.client.post(
        "/api/admin/questions/x/cancel", data="reason=x", headers={"Content-Type": "text/plain"}
    )
    assert refused.status == 415
    foreign = await console.client.post(
        "/api/admin/questions/x/cancel", json={}, headers={"Origin": "https://evil.example"}
    )
    assert foreign.status == 403
    status, missing = await admin(console, "GET", "questions/int_missing")
    assert (status, missing["kind"]) == (404, "NotFound")
    page = await console.client.get("/admin")
    assert page.status == 200
    assert "/static/admin.js" in await page.text()
    script = await console.client.get("/static/admin.js")
    assert script.status == 200 and "/api/admin/pending" in await script.text()


async def test_signed_in_people_are_admins_only_when_listed(
    make_console: Callable[..., Awaitable[Console]],
) -> None:
    """With sign-in on, ana (in BOT_ADMINS as console:ana) may act; bo is refused, on record."""
    console = await make_console(users=USERS)
    status, refused = await admin(console, "GET", "pending", user="bo")
    assert (status, refused["kind"]) == (403, "AdminsOnly")
    assert refused["message"].startswith("Only admins can use that command")
    status, page = await admin(console, "GET", "pending", user="ana")
    assert (status, page["kind"]) == (200, "PendingPage")
    events = await console.service.stores.audit.recent()
    assert [(e.kind, e.actor) for e in events if e.kind.startswith("admin")] == [
        ("admin", "console:ana"),
        ("admin-refused", "console:bo"),
    ]
