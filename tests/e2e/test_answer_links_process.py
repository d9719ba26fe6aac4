"""Answer links against a real bot process: /v1 hands them out once, the page answers."""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
import pytest

from bot.client import Bridge
from tests.e2e._api import API_KEY, Api, api_env, approval
from tests.e2e._server import StartBot
from tests.e2e._store import overdue

pytestmark = pytest.mark.e2e

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


async def answer_on_page(http: aiohttp.ClientSession, link: str, decision: str) -> int:
    """Open the link as a person would, then send its form; the final status."""
    async with http.get(link) as page:
        assert page.status == 200
        found = CSRF.search(await page.text())
    assert found is not None, "the page drew no form"
    form = {"csrf": found.group(1), "decision": decision}
    async with http.post(link, data=form, allow_redirects=False) as sent:
        return sent.status


async def test_a_link_question_is_answered_through_two_links_and_says_which(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Route link, two link answerers, quorum 2: links on the 201 only, scanners change nothing,
    both links vote, the closed object names them; no link reaches the log."""
    server = await start_bot(**api_env("link:*"))
    api = Api(http, server.url)
    body = approval(
        "links-1",
        {"surface": "link", "conversation": "release-7"},
        answerers=["link:ticket-42", "link:pr-7"],
        policy={"quorum": 2},
    )
    created = await api.created(body)
    links = created["links"]
    assert set(links) == {"ticket-42", "pr-7"}
    assert all(url.startswith(f"{server.url}/q/") for url in links.values())
    assert created["delivery"]["status"] in ("pending", "posted")
    # Never again: not on the same request's 200, nor on a read.
    again_status, again = await api.ask(body)
    assert again_status == 200 and again["links"] is None
    _, read = await api.get(created["id"])
    assert read["links"] is None and read["status"] == "open"
    # A mail scanner opens every link, twice: nothing is answered.
    for url in links.values():
        for _ in range(2):
            async with http.get(url) as scanned:
                assert scanned.status == 200
    _, scanned_state = await api.get(created["id"])
    assert scanned_state["status"] == "open" and scanned_state["tally"]["approve"] == []
    assert await answer_on_page(http, links["ticket-42"], "approve") == 303
    _, counted = await api.get(created["id"])
    assert counted["status"] == "open" and counted["tally"]["approve"] == ["link:ticket-42"]
    assert await answer_on_page(http, links["pr-7"], "approve") == 303
    status, answered = await api.get(created["id"], wait=10)
    assert status == 200 and answered["status"] == "answered", answered
    assert answered["answer"]["decision"] == "approve"
    assert sorted(answered["tally"]["approve"]) == ["link:pr-7", "link:ticket-42"]
    # The link whose vote closed it; the tally holds both.
    assert answered["answered_by"]["id"] == "link:pr-7"
    assert answered["links"] is None
    log = server.log_text()
    for url in links.values():
        assert url.rsplit("/", 1)[-1] not in log
    assert "/q/[link]" in log


async def test_a_link_route_without_link_answerers_is_refused(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Nobody could reach it: 400 naming what to write."""
    server = await start_bot(**api_env("link:*"))
    status, refused = await Api(http, server.url).ask(
        approval("links-2", {"surface": "link", "conversation": "x"}, answerers=["anyone"])
    )
    assert status == 400
    assert "link:<id>" in refused["error"]["message"]


async def test_the_python_client_routes_to_link_and_keeps_the_links(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """route="link:<id>" in the client: the handle keeps the 201's links; a page answer
    reaches wait()."""
    server = await start_bot(**api_env("link:*"))
    async with Bridge(server.url, API_KEY) as bridge:
        asked = await bridge.approve(
            "deploy",
            "Ship 2.4",
            arguments={"service": "api"},
            risk="low",
            route="link:support",
            answerers=["link:ticket-9"],
        )
        assert set(asked.links) == {"ticket-9"}
        await asked.refresh()
        assert asked.object.links is None and set(asked.links) == {"ticket-9"}
        assert await answer_on_page(http, asked.links["ticket-9"], "reject") == 303
        closed = await asked.wait(timeout=30)
    assert closed.status == "answered" and closed.answer == {"decision": "reject", "comment": ""}
    assert closed.answered_by is not None and closed.answered_by.id == "link:ticket-9"


async def test_every_v1_answer_and_above_all_the_201_with_links_is_never_stored(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Cache-Control: no-store on the 201 that carries the links, on its replay, on a read,
    on the list and on a refusal: no cache between the agent and the bridge keeps a link."""
    server = await start_bot(**api_env("link:*"))
    api = Api(http, server.url)
    body = approval("cached", {"surface": "link", "conversation": "c"}, answerers=["link:t-1"])
    headers = {**api.headers, "Content-Type": "application/json"}
    seen: dict[str, tuple[int, str | None]] = {}
    for name, method, path, sent in [
        ("created", "POST", "/v1/questions", body),
        ("replayed", "POST", "/v1/questions", body),
        ("listed", "GET", "/v1/questions", None),
        ("refused", "GET", "/v1/questions/int_nope", None),
    ]:
        data = None if sent is None else json.dumps(sent)
        async with http.request(method, server.url + path, data=data, headers=headers) as answer:
            seen[name] = (answer.status, answer.headers.get("Cache-Control"))
            if name == "created":
                question_id = (await answer.json())["id"]
    async with http.get(f"{server.url}/v1/questions/{question_id}", headers=headers) as read:
        seen["read"] = (read.status, read.headers.get("Cache-Control"))
    assert seen == {
        "created": (201, "no-store"),
        "replayed": (200, "no-store"),
        "listed": (200, "no-store"),
        "refused": (404, "no-store"),
        "read": (200, "no-store"),
    }


async def test_a_link_with_a_tracking_query_opens_and_answers_but_never_takes_a_token(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """A mail rewriter's ?utm_source=x: the page opens and its form answers (the query is
    ignored); a query naming a token, or holding a JWT, is still refused before the page."""
    server = await start_bot(**api_env("link:*"))
    api = Api(http, server.url)
    body = approval("tracked", {"surface": "link", "conversation": "c"}, answerers=["link:t-1"])
    created = await api.created(body)
    link = created["links"]["t-1"]
    tracked = f"{link}?utm_source=newsletter&utm_medium=email"
    assert await answer_on_page(http, tracked, "approve") == 303
    _, answered = await api.get(created["id"])
    assert answered["status"] == "answered" and answered["answered_by"]["id"] == "link:t-1"
    for query in ["?token=abc", f"?next={link.rsplit('/', 1)[-1]}"]:
        async with http.get(link + query) as refused:
            assert refused.status == 400
            assert "never accepted in a URL" in (await refused.json())["error"]
    server.assert_log_clean()


async def test_a_link_whose_question_the_sweeper_expired_is_gone(
    store_env: dict[str, str], start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Expired by the sweeper before the link's own expiry: the page is a 410 saying the link
    expired, and its form, drawn while open, is a 410 too; on SQLite and PostgreSQL."""
    server = await start_bot(**api_env("link:*"), BOT_SWEEP_SECONDS="0.2", **store_env)
    api = Api(http, server.url)
    body = approval("swept", {"surface": "link", "conversation": "c"}, answerers=["link:t-1"])
    created = await api.created(body)
    link = created["links"]["t-1"]
    async with http.get(link) as page:
        found = CSRF.search(await page.text())
    assert found is not None
    await overdue(server, created["id"])
    status, swept = await api.get(created["id"], wait=20)
    assert (status, swept["status"]) == (200, "expired"), swept
    async with http.get(link) as gone:
        assert gone.status == 410
        assert "This link has expired" in await gone.text()
    form = {"csrf": found.group(1), "decision": "approve"}
    async with http.post(link, data=form, allow_redirects=False) as late:
        assert late.status == 410
    _, still = await api.get(created["id"])
    assert still["status"] == "expired" and still["answer"] is None
    server.assert_log_clean()


def replicas_form(key: str) -> dict[str, Any]:
    return {
        "idempotency_key": key,
        "kind": "form",
        "payload": {
            "title": "Scale web",
            "message": "How many replicas?",
            "schema": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9}
                },
                "required": ["replicas"],
            },
        },
        "route": {"surface": "link", "conversation": "scale"},
        "answerers": ["link:ops"],
    }


async def test_an_answer_corrected_after_a_422_on_the_same_page_is_recorded(
    store_env: dict[str, str], start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """A typo refused (422), then the same page's form sent again corrected: 303 and the
    corrected answer recorded; sent once more, that answer stands; SQLite and PostgreSQL."""
    server = await start_bot(**api_env("link:*"), **store_env)
    api = Api(http, server.url)
    created = await api.created(replicas_form("typo"))
    link = created["links"]["ops"]
    async with http.get(link) as page:
        found = CSRF.search(await page.text())
    assert found is not None
    csrf = found.group(1)
    async with http.post(link, data={"csrf": csrf, "f0": "33"}, allow_redirects=False) as typo:
        assert typo.status == 422
        assert "replicas" in (await typo.text()).lower()
    async with http.post(link, data={"csrf": csrf, "f0": "3"}, allow_redirects=False) as fixed:
        assert fixed.status == 303
    # Once recorded, the form sent again (with yet another value) changes nothing.
    async with http.post(link, data={"csrf": csrf, "f0": "4"}, allow_redirects=False) as again:
        assert again.status == 409
    _, answered = await api.get(created["id"])
    assert answered["status"] == "answered", answered
    assert answered["answer"] == {"replicas": 3}
    async with http.get(link) as shown:
        assert "Your answer is recorded." in await shown.text()
    server.assert_log_clean()
