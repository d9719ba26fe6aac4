"""The console's admin panel and its JSON API, over HTTP on a loopback port."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import encode_basic_auth

from bot.admin import AdminService, results
from bot.questions.records import QuestionStatus
from bot.service.answering.outcomes import Responder
from tests.adapters.console.console_support import (
    HOSTILE,
    HOSTILE_SHOWN,
    WHICH_ENV,
    Console,
    ConsoleFactory,
    Past,
    closed_question,
)

ADMINS = ["console:ana"]
USERS = {"ana": "ana's long console password", "bo": "bo's long console password"}


@pytest.fixture
async def console(make_console: ConsoleFactory) -> Console:
    """The console as create_app mounts it (guards, sign-in), with ana an admin."""
    return await make_console(admins=ADMINS)


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
    status, history = await admin(console, "GET", "history?status=cancelled&user=console:Ana")
    assert (status, history["kind"]) == (200, "HistoryPage")
    (closed_item,) = history["items"]
    assert closed_item["question"]["interrupt_id"] == qid
    assert closed_item["question"]["closed_by"] == "Ana" and not closed_item["purged"]
    status, none = await admin(console, "GET", "history?status=expired")
    assert (status, none["items"]) == (200, [])
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
    make_console: ConsoleFactory,
) -> None:
    """With sign-in on, ana (in BOT_ADMINS as console:ana) may act; bo is refused, on record."""
    console = await make_console(users=USERS, admins=ADMINS)
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


PAST = (
    Past(0, QuestionStatus.ANSWERED, "slack", "alice", "slack:T1:U7", "approve", day=1),
    Past(1, QuestionStatus.ANSWERED, "teams", "alice", "teams:t:u9", "reject", day=2),
    Past(2, QuestionStatus.EXPIRED, "slack", "bob", "", day=3),
    Past(3, QuestionStatus.CANCELLED, "console", "bob", "console:ana", day=4),
    Past(4, QuestionStatus.ANSWERED, "slack", "bob", "slack:T1:U7", "reject", day=5),
)
# Each filter as the page sends it (``admin history``'s option names) and what it lists.
FILTERED = {
    "": ["q-past-4", "q-past-3", "q-past-2", "q-past-1", "q-past-0"],
    "status=answered": ["q-past-4", "q-past-1", "q-past-0"],
    "channel=slack:ops": ["q-past-4", "q-past-2", "q-past-0"],
    "surface=teams": ["q-past-1"],
    "user=alice": ["q-past-1", "q-past-0"],
    "by=slack:T1:U7": ["q-past-4", "q-past-0"],
    "decision=reject": ["q-past-4", "q-past-1"],
    "since=1970-01-03&until=1970-01-04": ["q-past-2", "q-past-1"],
    "status=answered&surface=slack&decision=reject": ["q-past-4"],
}


async def test_the_history_api_lists_closed_questions_by_admin_historys_filters(
    console: Console,
) -> None:
    """Each filter, and a cursor's pages, list what ``admin history`` lists for the same words."""
    for past in PAST:
        await closed_question(console.service.stores, past)
    shell = AdminService(
        stores=console.service.stores, admins=[], max_ttl_seconds=3600.0, clock=console.clock
    )
    for query, expected in FILTERED.items():
        status, page = await admin(console, "GET", f"history?{query}")
        assert (status, page["kind"]) == (200, "HistoryPage"), (query, page)
        assert [i["question"]["interrupt_id"] for i in page["items"]] == expected, query
        words = ["history", *(w for w in query.split("&") if w)]
        same = await shell.handle(words, who=Responder("shell:ops", "ops", is_admin=True))
        assert isinstance(same, results.HistoryPage)
        assert [c.question.interrupt_id for c in same.items] == expected, query
    status, first = await admin(console, "GET", "history?limit=2&user=bob")
    assert [i["question"]["interrupt_id"] for i in first["items"]] == ["q-past-4", "q-past-3"]
    after = first["next_after"]
    status, second = await admin(console, "GET", f"history?limit=2&user=bob&after={after}")
    assert [i["question"]["interrupt_id"] for i in second["items"]] == ["q-past-2"]
    assert second["next_after"] is None
    (newest, *_) = (await admin(console, "GET", "history"))[1]["items"]
    assert (newest["title"], newest["decision"], newest["surface"]) == (
        "deploy web 4",
        "reject",
        "slack",
    )
    for query in ("status=open", "since=yesterday", "after=x1"):
        status, refused = await admin(console, "GET", f"history?{query}")
        assert (status, refused["kind"]) == (422, "CommandInvalid"), query
        assert refused["message"], query


async def test_history_shows_an_agents_words_as_text(console: Console) -> None:
    """Markup and a bidirectional control in what an agent asked come back shown, not live."""
    past = Past(9, QuestionStatus.ANSWERED, "slack", "alice", "slack:T1:U7", "approve")
    await closed_question(console.service.stores, replace(past, summary=HOSTILE))
    status, page = await admin(console, "GET", "history")
    (item,) = page["items"]
    assert status == 200 and item["title"] == HOSTILE_SHOWN
    assert item["question"]["payload"]["summary"] == HOSTILE_SHOWN
    assert "\u202e" not in json.dumps(page, ensure_ascii=False)


async def test_history_is_for_admins_only(make_console: ConsoleFactory) -> None:
    """bo, signed in but not an admin, gets the refusal and no question; ana gets the page."""
    console = await make_console(users=USERS, admins=ADMINS)
    await closed_question(console.service.stores, PAST[0])
    status, refused = await admin(console, "GET", "history", user="bo")
    assert (status, refused["kind"]) == (403, "AdminsOnly")
    assert "items" not in refused and "q-past-0" not in json.dumps(refused)
    status, page = await admin(console, "GET", "history", user="ana")
    assert status == 200 and len(page["items"]) == 1
    anonymous = await console.client.get("/api/admin/history")
    assert anonymous.status == 401
