"""The question page (/q/<link>): GETs only read, POSTs answer as the link's answerer, once."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.api import API_QUESTIONS, ApiSettings, LinkSettings, mount_link_page, serve_api
from bot.api._page import OTHER_SITE, PAGE_STALE, YOUR_ANSWER_COUNTED
from bot.api._page_html import LINK_EXPIRED, LINK_INVALID, STYLE_HASH
from bot.api.links import ANSWER_LINKS, AnswerLinks
from bot.contract.answers import FormValues, decision_of
from bot.contract.models import CREATE_QUESTION
from bot.display import display
from bot.human.factory import ask_user_registration
from bot.human.tokens import SigningKey
from bot.interactions.approval import approval_registration
from bot.interactions.form import form_registration
from bot.questions.records import ApiKey, Question, QuestionStatus
from bot.service.answering.outcomes import NotAllowedToAnswer
from bot.service.delivering.messages import refusal_text
from bot.service.running.runs import RUN_SERVICE, RunService
from bot.serving import ALLOWED_HOSTS, SIGN_IN, AllowedHosts, SignIn, http_guards
from bot.serving._access import logged_path
from bot.stores.ports import Stores
from bot.testing import FixedClock, RecordingSurface
from bot.webhooks import WebhookSettings
from tests.e2e._server import free_port
from tests.support import HarnessFactory

KEY = ApiKey("ci", "", ("*",), key_id="key_ci")
LINK_KEY = SigningKey("links", "l" * 48, "l" * 48)
ANA, BOB, EVE = "email:ana@example.org", "email:bob@example.org", "email:eve@example.org"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Page:
    client: TestClient[Any, Any]
    service: RunService
    stores: Stores
    links: AnswerLinks
    clock: FixedClock

    async def ask(self, raw: dict[str, Any]) -> Question:
        questions = self.client.server.app[API_QUESTIONS]
        created = await questions.create(KEY, CREATE_QUESTION.validate_python(raw), raw)
        await self.service.wait_idle()  # its post delivered, so only the page could change it
        view = await self.stores.api.get(created.question["id"])
        assert view is not None
        return view.question

    async def record(self, question: Question) -> Question:
        found = await self.stores.ledger.get(question.interrupt_id)
        assert found is not None
        return found

    def path(self, question: Question, answerer: str, preselect: str | None = None) -> str:
        url = self.links.url_for(question, answerer, preselect=preselect)
        return url.removeprefix(self.links.public_url)

    async def csrf(self, path: str) -> str:
        response = await self.client.get(path)
        found = CSRF.search(await response.text())
        assert found is not None, "the page drew no form"
        return found.group(1)


PageFactory = Callable[..., Awaitable[Page]]


@pytest.fixture
async def make_page(
    harness: HarnessFactory, sqlite_stores: Stores, clock: FixedClock
) -> AsyncIterator[PageFactory]:
    opened: list[tuple[TestClient[Any, Any], Callable[[], Awaitable[None]]]] = []

    async def make(
        *, settings: LinkSettings | None = None, users: dict[str, str] | None = None
    ) -> Page:
        h = harness(
            sqlite_stores,
            [],
            registrations=[ask_user_registration(), approval_registration(), form_registration()],
        )
        h.service.add_surface(RecordingSurface(name="console"))
        port = free_port()
        allowed = AllowedHosts.loopback(port)
        app = web.Application(middlewares=http_guards(allowed=allowed, body_timeout=5.0))
        app[ALLOWED_HOSTS] = allowed
        app[SIGN_IN] = SignIn(users, clock=clock)
        app[RUN_SERVICE] = h.service
        links = AnswerLinks([LINK_KEY], public_url=f"http://127.0.0.1:{port}")
        app[ANSWER_LINKS] = links
        stop = serve_api(app, ApiSettings(), WebhookSettings(), service=h.service)
        mount_link_page(app, settings or LinkSettings(), clock=clock)
        client: TestClient[Any, Any] = TestClient(TestServer(app, host="127.0.0.1", port=port))
        await client.start_server()
        opened.append((client, stop))
        return Page(client, h.service, sqlite_stores, links, clock)

    yield make
    for client, stop in opened:
        await stop()
        await client.close()


def approval(key: str, *, quorum: int = 2, summary: str = "Roll out 2.4") -> dict[str, Any]:
    return {
        "idempotency_key": key,
        "kind": "approval",
        "payload": {
            "action": "deploy",
            "summary": summary,
            "arguments": {"service": "<b>api</b>", "replicas": 3},
            "risk": "high",
        },
        "answerers": [ANA, BOB],
        "route": {"surface": "console", "conversation": "c1"},
        "ttl_seconds": 600,
        "policy": {"quorum": quorum},
    }


FORM = {
    "idempotency_key": "form-1",
    "kind": "form",
    "payload": {
        "title": "Release details",
        "message": "Fill in the release.",
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 1},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
                "canary": {"type": "boolean"},
                "region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "US"]},
                "checks": {"type": "array", "items": {"type": "string", "enum": ["smoke", "load"]}},
            },
            "required": ["name", "replicas", "region"],
        },
    },
    "answerers": [ANA],
    "route": {"surface": "console", "conversation": "c1"},
    "ttl_seconds": 600,
}


async def test_the_page_draws_the_question_escaped_with_its_defences(
    make_page: PageFactory,
) -> None:
    """Who asked, risk, tally and arguments, escaped; no referrer, no framing, no script."""
    page = await make_page()
    question = await page.ask(approval("draw", summary="Ship <script>alert(1)</script> \u202e now"))
    response = await page.client.get(page.path(question, ANA))
    assert response.status == 200
    text = await response.text()
    assert "Asked by api:ci" in text
    assert "For ana@example.org" in text
    assert "0 of 2 approved" in text
    assert "Risk: high" in text
    assert "<script>" not in text
    assert display("Ship <script>alert(1)</script> \u202e now", markup="html") in text
    assert "&lt;b&gt;api&lt;/b&gt;" in text
    headers = response.headers
    assert headers["Referrer-Policy"] == "no-referrer"
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert f"style-src '{STYLE_HASH}'" in csp
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Cache-Control"] == "no-store"


async def test_a_scanner_opening_every_link_changes_nothing(make_page: PageFactory) -> None:
    """GETs and HEADs of every answerer's link, preselected or not, leave the row as it was."""
    page = await make_page()
    question = await page.ask(approval("scan"))
    before = await page.record(question)
    for answerer in (ANA, BOB):
        for preselect in (None, "approve", "reject"):
            path = page.path(question, answerer, preselect)
            for _ in range(3):
                assert (await page.client.get(path)).status == 200
                assert (await page.client.head(path)).status == 200
    await page.service.wait_idle()
    assert await page.record(question) == before
    assert before.status is QuestionStatus.OUTSTANDING and before.tally is None


async def test_a_preselected_answer_is_shown_chosen_and_not_sent(make_page: PageFactory) -> None:
    """The approve link's page has approve checked; only the POST answers."""
    page = await make_page()
    question = await page.ask(approval("pre"))
    text = await (await page.client.get(page.path(question, ANA, "approve"))).text()
    assert 'value="approve" required checked' in text
    assert 'value="reject" required checked' not in text


async def test_two_links_answer_a_quorum_once_each_and_the_page_says_how_it_ended(
    make_page: PageFactory,
) -> None:
    """Ana's vote counts, Bob's closes it; each page then says it was approved and by whom."""
    page = await make_page()
    question = await page.ask(approval("quorum"))
    ana, bob = page.path(question, ANA), page.path(question, BOB)
    sent = await page.client.post(
        ana, data={"csrf": await page.csrf(ana), "decision": "approve"}, allow_redirects=False
    )
    assert sent.status == 303 and sent.headers["Location"] == ana
    counted = await page.record(question)
    assert counted.status is QuestionStatus.OUTSTANDING
    assert counted.tally is not None and counted.tally.approve == [ANA]
    shown = await (await page.client.get(ana)).text()
    assert YOUR_ANSWER_COUNTED in shown and "1 of 2 approved" in shown
    await page.client.post(bob, data={"csrf": await page.csrf(bob), "decision": "approve"})
    closed = await page.record(question)
    assert closed.status is QuestionStatus.ANSWERED
    assert decision_of(closed.answer) == "approve"
    for path in (ana, bob):
        response = await page.client.get(path)
        text = await response.text()
        assert response.status == 200
        assert "Approved by ana@example.org and bob@example.org" in text
        assert 'name="csrf"' not in text  # no form once it is closed


async def test_a_replayed_post_changes_nothing(make_page: PageFactory) -> None:
    """The same form sent again, or a second drawing's form, adds no vote and no close."""
    page = await make_page()
    question = await page.ask(approval("replay"))
    ana = page.path(question, ANA)
    form = {"csrf": await page.csrf(ana), "decision": "approve"}
    assert (await page.client.post(ana, data=form, allow_redirects=False)).status == 303
    after_first = await page.record(question)
    replayed = await page.client.post(ana, data=form, allow_redirects=False)
    assert replayed.status == 303  # the same request: the same outcome, written once
    again = await page.client.post(ana, data={"csrf": await page.csrf(ana), "decision": "reject"})
    assert again.status == 409
    assert await page.record(question) == after_first


async def test_posts_over_the_rate_are_refused_before_anything_is_read(
    make_page: PageFactory,
) -> None:
    """Past BOT_LINK_POSTS_PER_MINUTE from one address: a 429 page with Retry-After, the
    question untouched; once the minute has slid by, the answer goes through."""
    page = await make_page(settings=LinkSettings(BOT_LINK_POSTS_PER_MINUTE=2))
    question = await page.ask(approval("rate", quorum=1))
    ana = page.path(question, ANA)
    stale = {"csrf": "not-the-page-value", "decision": "approve"}
    for _ in range(2):
        assert (await page.client.post(ana, data=stale)).status == 403
    refused = await page.client.post(
        ana, data={"csrf": await page.csrf(ana), "decision": "approve"}
    )
    assert refused.status == 429
    wait = int(refused.headers["Retry-After"])
    assert 1 <= wait <= 61  # a sliding minute, rounded up past the instant
    assert f"wait {wait} s, then send yours again" in await refused.text()
    assert (await page.record(question)).status is QuestionStatus.OUTSTANDING
    page.clock.advance(120)
    form = {"csrf": await page.csrf(ana), "decision": "approve"}
    assert (await page.client.post(ana, data=form, allow_redirects=False)).status == 303
    assert (await page.record(question)).status is QuestionStatus.ANSWERED


async def test_a_link_answers_only_as_its_own_answerer(make_page: PageFactory) -> None:
    """Eve's link is refused; Ana's page value fails on Bob's link; a forged link is void."""
    page = await make_page()
    question = await page.ask(approval("whose"))
    eve = page.path(question, EVE)
    refused = await page.client.post(
        eve, data={"csrf": await page.csrf(eve), "decision": "approve"}
    )
    assert refused.status == 403
    assert display(refusal_text(NotAllowedToAnswer()), markup="html") in await refused.text()
    ana_value = await page.csrf(page.path(question, ANA))
    bob = page.path(question, BOB)
    crossed = await page.client.post(bob, data={"csrf": ana_value, "decision": "approve"})
    assert crossed.status == 403 and display(PAGE_STALE, markup="html") in await crossed.text()
    head, body, signature = bob.removeprefix("/q/").split(".")
    forged = f"/q/{head}.{body}.{signature[::-1]}"
    invalid = await page.client.get(forged)
    assert invalid.status == 404 and display(LINK_INVALID, markup="html") in await invalid.text()
    assert (await page.record(question)).tally is None


@pytest.mark.parametrize("value", [None, "", "not-a-value", "eyJhbGciOiJub25lIn0.e30."])
async def test_a_post_without_the_page_value_is_refused(
    make_page: PageFactory, value: str | None
) -> None:
    """Missing or wrong CSRF value: 403, the page says to reload, nothing changes."""
    page = await make_page()
    question = await page.ask(approval(f"csrf-{value}"))
    path = page.path(question, ANA)
    data = {"decision": "approve"} if value is None else {"csrf": value, "decision": "approve"}
    response = await page.client.post(path, data=data)
    assert response.status == 403
    assert display(PAGE_STALE, markup="html") in await response.text()
    assert (await page.record(question)).tally is None


async def test_a_post_from_another_site_is_refused(make_page: PageFactory) -> None:
    """An Origin that is not ours: refused before anything is read."""
    page = await make_page()
    question = await page.ask(approval("origin"))
    path = page.path(question, ANA)
    response = await page.client.post(
        path,
        data={"csrf": await page.csrf(path), "decision": "approve"},
        headers={"Origin": "https://evil.example"},
    )
    assert response.status == 403 and display(OTHER_SITE, markup="html") in await response.text()
    assert (await page.record(question)).tally is None


async def test_an_expired_link_says_it_expired_and_answers_nothing(make_page: PageFactory) -> None:
    """Past the question's expiry the page says so (410), before and after the sweep."""
    page = await make_page()
    question = await page.ask(approval("late"))
    path = page.path(question, ANA)
    value = await page.csrf(path)
    page.clock.advance(601)
    response = await page.client.get(path)
    assert response.status == 410
    text = await response.text()
    assert display(LINK_EXPIRED, markup="html") in text and 'name="csrf"' not in text
    posted = await page.client.post(path, data={"csrf": value, "decision": "approve"})
    assert posted.status == 410
    assert (await page.record(question)).status is QuestionStatus.OUTSTANDING
    assert await page.service.sweep() == 1
    swept = await (await page.client.get(path)).text()
    assert "Expired at" in swept and display(LINK_EXPIRED, markup="html") in swept


async def test_an_expiry_that_rejects_by_policy_says_it_was_rejected(
    make_page: PageFactory,
) -> None:
    """``on_expire: "reject"``: once swept, the page says the expiry stood for a rejection."""
    page = await make_page()
    asked = approval("fails-closed")
    asked["policy"] = {"on_expire": "reject"}
    question = await page.ask(asked)
    path = page.path(question, ANA)
    page.clock.advance(601)
    assert await page.service.sweep() == 1
    swept = await (await page.client.get(path)).text()
    assert "without an answer: rejected, as its policy says." in swept


async def test_a_form_question_is_answered_with_typed_values(make_page: PageFactory) -> None:
    """Text, integer, boolean, enum and multi-select fields come back in the schema's types."""
    page = await make_page()
    question = await page.ask(FORM)
    path = page.path(question, ANA)
    text = await (await page.client.get(path)).text()
    assert "Europe" in text and 'type="number"' in text
    fields = [
        ("csrf", await page.csrf(path)),
        ("f0", "Ada"),
        ("f1", "3"),
        ("f2", "true"),
        ("f3", "1"),
        ("f4", "0"),
        ("f4", "1"),
    ]
    response = await page.client.post(path, data=fields, allow_redirects=False)
    assert response.status == 303
    answered = await page.record(question)
    assert answered.status is QuestionStatus.ANSWERED
    assert answered.answer == FormValues(
        {
            "name": "Ada",
            "replicas": 3,
            "canary": True,
            "region": "us",
            "checks": ["smoke", "load"],
        }
    )


async def test_an_invalid_form_answer_names_the_field_and_changes_nothing(
    make_page: PageFactory,
) -> None:
    """A number out of bounds: 422 with the field named; the question stays open."""
    page = await make_page()
    question = await page.ask({**FORM, "idempotency_key": "form-bad"})
    path = page.path(question, ANA)
    fields = {"csrf": await page.csrf(path), "f0": "Ada", "f1": "99", "f3": "0"}
    response = await page.client.post(path, data=fields)
    assert response.status == 422
    assert "replicas" in await response.text()
    assert (await page.record(question)).status is QuestionStatus.OUTSTANDING
    tampered = {"csrf": await page.csrf(path), "f0": "Ada", "f1": "2", "f3": "7"}
    assert (await page.client.post(path, data=tampered)).status == 400


async def test_frame_ancestors_lists_the_configured_origins(make_page: PageFactory) -> None:
    """BOT_LINK_FRAME_ANCESTORS: those origins may frame the page, and X-Frame-Options is off."""
    settings = LinkSettings(
        BOT_LINK_FRAME_ANCESTORS="https://portal.example.com https://b.example:8443"
    )
    page = await make_page(settings=settings)
    question = await page.ask(approval("framed"))
    response = await page.client.get(page.path(question, ANA))
    csp = response.headers["Content-Security-Policy"]
    assert "frame-ancestors https://portal.example.com https://b.example:8443" in csp
    assert "X-Frame-Options" not in response.headers


def test_a_frame_ancestor_that_is_not_an_origin_is_refused() -> None:
    """A path or a wildcard is not an origin: the setting says how to write one."""
    with pytest.raises(ValueError, match="is not an origin"):
        LinkSettings(BOT_LINK_FRAME_ANCESTORS="https://portal.example.com/embed")


async def test_link_signin_requires_the_same_person_signed_in(make_page: PageFactory) -> None:
    """BOT_LINK_SIGNIN: no sign-in 401, another person 403, the answerer's own sign-in 200."""
    users = {"ana@example.org": "a" * 16, "bob@example.org": "b" * 16}
    page = await make_page(settings=LinkSettings(BOT_LINK_SIGNIN=True), users=users)
    question = await page.ask(approval("signin"))
    path = page.path(question, ANA)
    anonymous = await page.client.get(path)
    assert anonymous.status == 401 and "Basic" in anonymous.headers["WWW-Authenticate"]
    as_bob = await page.client.get(path, headers=basic("bob@example.org", "b" * 16))
    assert as_bob.status == 403
    as_ana = await page.client.get(path, headers=basic("ana@example.org", "a" * 16))
    assert as_ana.status == 200


def basic(name: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def test_the_access_log_never_holds_a_link() -> None:
    """A /q/ path is logged without its token; other paths as they are."""
    assert logged_path("/q/eyJhbGciOi.eyJqdGkiOi.c2ln") == "/q/[link]"
    assert logged_path("/v1/questions") == "/v1/questions"
