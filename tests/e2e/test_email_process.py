"""Email end to end: a real ``python -m bot`` mails through a real SMTP server on loopback.

The bot sends with aiosmtplib to aiosmtpd (``tests.fakes.smtp``); the test
opens the links as a mail scanner would (GET) and answers as a browser does
(GET the page, take its form value, POST it back).
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import aiohttp
import pytest

from bot.service.delivering.delivery import CLAIM_SECONDS
from tests import waiting
from tests.e2e._api import Api, api_env, approval
from tests.e2e._server import StartBot
from tests.e2e._slack import BOB, CHANNEL, SlackDriver, slack_bot, text_of
from tests.e2e._store import all_delivered, count
from tests.fakes.slack_api import TEAM, FakeSlack, buttons
from tests.fakes.smtp import SmtpFake

pytestmark = pytest.mark.e2e

ANA, BO = "ana@example.com", "bo@example.com"
SENDER = "bridge@bridge.example"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def smtp() -> Iterator[SmtpFake]:
    fake = SmtpFake().start()
    yield fake
    fake.stop()


def _env(smtp: SmtpFake) -> dict[str, str]:
    return api_env(BOT_SMTP_URL=smtp.url, BOT_EMAIL_FROM=SENDER, BOT_SIGNING_KEYS="k1:" + "e" * 40)


def _to(address: str) -> dict[str, str]:
    return {"surface": "email", "conversation": address}


def _links(message: EmailMessage) -> dict[str, str]:
    """Each button's label and URL, from the text part."""
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    found = {}
    for line in str(body.get_content()).splitlines():
        label, _, url = line.partition(": ")
        if "/q/" in url:
            found[label] = url
    return found


async def _mailed(smtp: SmtpFake, n: int) -> list[EmailMessage]:
    return await waiting.eventually(
        lambda: smtp.taken() if len(smtp.taken()) >= n else None, what=f"{n} emails taken"
    )


async def _answer(
    http: aiohttp.ClientSession, url: str, decision: str, form_of: str | None = None
) -> tuple[int, str]:
    """As a browser: GET the page (``form_of``'s, by default the link's), POST its form."""
    async with http.get(form_of or url) as page:
        value = CSRF.search(await page.text())
    assert value is not None, "the page drew no form"
    data = {"csrf": value.group(1), "decision": decision}
    async with http.post(url, data=data, allow_redirects=True) as answered:
        return answered.status, await answered.text()


async def _state(api: Api, question_id: str) -> dict[str, Any]:
    status, body = await api.get(question_id)
    assert status == 200
    return body


async def test_two_emailed_approvers_decide_a_quorum_of_two_through_their_links(
    start_bot: StartBot, http: aiohttp.ClientSession, smtp: SmtpFake
) -> None:
    """Scanners' GETs change nothing, a replay changes nothing, a link answers only as its
    own recipient, and the second approval closes the question once."""
    bot = await start_bot(**_env(smtp))
    api = Api(http, bot.url)
    body = approval(
        "mail-1",
        _to(ANA),
        routes=[_to(ANA), _to(BO)],
        answerers=[f"email:{ANA}", f"email:{BO}"],
        policy={"quorum": 2},
    )
    del body["route"]
    created = await api.created(body)
    qid = created["id"]
    messages = await _mailed(smtp, 2)
    by_to = {str(m["To"]): m for m in messages}
    assert set(by_to) == {ANA, BO}
    assert all(m["Subject"] == "Approval needed: deploy" for m in messages)
    ana, bo = _links(by_to[ANA]), _links(by_to[BO])
    assert set(ana) == set(bo) == {"Approve", "Reject"}

    # A mail scanner opens every link: each page draws, nothing is answered.
    for url in [*ana.values(), *bo.values()]:
        async with http.get(url) as page:
            assert page.status == 200
            assert 'name="decision"' in await page.text()
    assert (await _state(api, qid))["status"] == "open"

    # Ana approves from her page; the same form sent again is the same one answer.
    async with http.get(ana["Approve"]) as page:
        value = CSRF.search(await page.text())
    assert value is not None
    form = {"csrf": value.group(1), "decision": "approve"}
    for _ in range(2):
        async with http.post(ana["Approve"], data=form) as posted:
            assert posted.status == 200
    after = await _state(api, qid)
    assert after["tally"]["approve"] == [f"email:{ANA}"] and after["status"] == "open"

    # Ana's link cannot stand for Bo: her page's form refused on his link, and a fresh
    # answer through hers is still hers (already counted), never his.
    status, _ = await _answer(http, bo["Approve"], "approve", form_of=ana["Approve"])
    assert status == 403
    status, text = await _answer(http, ana["Reject"], "reject")
    assert "already answered" in text
    assert (await _state(api, qid))["tally"] == {"approve": [f"email:{ANA}"], "reject": []}

    status, _ = await _answer(http, bo["Approve"], "approve")
    assert status == 200
    closed = await _state(api, qid)
    assert closed["status"] == "answered" and closed["answer"]["decision"] == "approve"
    await all_delivered(bot)
    # Closed once: one close in the audit, and no more mail (an email is never edited).
    assert count(bot, "SELECT COUNT(*) FROM outbox WHERE kind = 'webhook'") <= 1
    assert len(smtp.taken()) == 2


async def test_a_451_is_retried_and_delivered_once_and_a_550_fails_the_post(
    start_bot: StartBot, http: aiohttp.ClientSession, smtp: SmtpFake
) -> None:
    """Greylisting is waited out; a refused mailbox cancels a question with no other post."""
    smtp.replies.append("451 4.7.1 Greylisted, try again")
    bot = await start_bot(**_env(smtp))
    api = Api(http, bot.url)
    status, first = await api.ask(approval("grey-1", _to(ANA)))
    assert status == 201
    await _mailed(smtp, 1)
    await all_delivered(bot)
    assert smtp.refused == ["451 4.7.1 Greylisted, try again"]
    assert [m["To"] for m in smtp.taken()] == [ANA]
    assert (await _state(api, first["id"]))["status"] == "open"

    smtp.replies.append("550 5.1.1 No such mailbox")
    status, second = await api.ask(approval("gone-1", _to(BO)))
    assert status == 201
    failed = await waiting.eventually(
        lambda: count(bot, "SELECT COUNT(*) FROM outbox WHERE state = 'failed'") or None,
        what="the post failed",
    )
    assert failed == 1
    cancelled = await waiting.eventually(
        lambda: _closed(api, second["id"]), what="the unpostable question closed"
    )
    assert cancelled["status"] == "cancelled"
    assert len(smtp.taken()) == 1


async def _closed(api: Api, question_id: str) -> dict[str, Any] | None:
    body = await _state(api, question_id)
    return body if body["status"] != "open" else None


async def test_a_kill_between_the_send_and_the_mark_sends_it_at_most_twice_with_one_id(
    start_bot: StartBot, http: aiohttp.ClientSession, smtp: SmtpFake
) -> None:
    """SIGKILL once the server has the message and before the bot hears 250: the restart
    sends it again (SMTP cannot tell it was taken), with the same Message-ID, and no more."""
    bot = await start_bot(**_env(smtp))

    def kill(_: EmailMessage) -> None:
        smtp.on_taken = None
        assert bot.process is not None
        os.kill(bot.process.pid, signal.SIGKILL)

    smtp.on_taken = kill
    status, created = await Api(http, bot.url).ask(approval("kill-1", _to(ANA)))
    assert status == 201
    await _mailed(smtp, 1)
    assert bot.process is not None and bot.process.wait(timeout=10) == -signal.SIGKILL
    await bot.restart()
    # The dead process's claim on the row lapses first (a liveness deadline, not a speed).
    await waiting.eventually(
        lambda: not count(bot, "SELECT COUNT(*) FROM outbox WHERE state <> 'done'"),
        what="the post delivered after the restart",
        seconds=CLAIM_SECONDS + 30,
        every=0.2,
    )
    ids = {m["Message-ID"] for m in smtp.taken()}
    assert 1 <= len(smtp.taken()) <= 2 and len(ids) == 1
    assert (await _state(Api(http, bot.url), created["id"]))["status"] == "open"


async def test_a_question_on_slack_and_email_closes_on_both_whichever_answers(
    start_bot: StartBot, http: aiohttp.ClientSession, smtp: SmtpFake, fake: FakeSlack
) -> None:
    """One question posted in a Slack channel and mailed to Ana. Ana approves through her
    link: the Slack message is edited to say so (no buttons), a late click there is told it
    was answered, and no second email goes out. The other way round, a Slack approval
    closes the question's page: its form is gone and a POST of it changes nothing."""
    bot = await slack_bot(start_bot, fake, **_env(smtp))
    slack, api = SlackDriver(http, bot, fake), Api(http, bot.url)
    routes = [{"surface": "slack", "conversation": CHANNEL}, _to(ANA)]

    async def ask(key: str, count: int) -> tuple[str, Any, EmailMessage]:
        body = {**approval(key, routes[0]), "routes": routes}
        del body["route"]
        created = await api.created(body)
        return created["id"], await slack.question(count), (await _mailed(smtp, count))[-1]

    first, posted, mail = await ask("both-email", 1)
    status, page = await _answer(http, _links(mail)["Approve"], "approve")
    assert status == 200 and f"Approved by {ANA}" in page
    edited = (await slack.edits_of(posted))[0]
    assert f"Approved by {ANA}" in text_of(edited) and not buttons(edited.args)
    assert (await slack.click(posted, "Approve", user=BOB))[0] == 200
    late = (await slack.ephemeral(BOB))[0].args["text"]
    assert late.startswith(f"This question was already answered by {ANA} at "), late
    shown = await _state(api, first)
    assert shown["status"] == "answered" and shown["answered_by"]["id"] == f"email:{ANA}"

    second, posted, mail = await ask("both-slack", 2)
    link = _links(mail)["Approve"]
    async with http.get(link) as opened:
        form = CSRF.search(await opened.text())
    assert form is not None  # open: the page draws its form
    assert (await slack.click(posted, "Approve", user=BOB))[0] == 200
    shown = await waiting.eventually(
        lambda: _answered(api, second), what="the question answered in Slack"
    )
    assert shown["answered_by"]["id"] == f"slack:{TEAM}:{BOB}"
    async with http.get(link) as closed:
        text = await closed.text()
    assert "Approved by" in text and CSRF.search(text) is None  # closed: no form to send
    data = {"csrf": form.group(1), "decision": "reject"}
    async with http.post(link, data=data) as refused:
        assert refused.status == 409
    assert (await _state(api, second))["answer"]["decision"] == "approve"
    assert len(smtp.taken()) == 2  # a sent email is never edited: one per question


async def _answered(api: Api, question_id: str) -> dict[str, Any] | None:
    shown = await _state(api, question_id)
    return shown if shown["status"] == "answered" else None


ANA_PASSWORD, BO_PASSWORD = "ana's long password", "bo's long password"


async def test_with_link_signin_an_emailed_link_answers_only_for_its_recipient_signed_in(
    start_bot: StartBot, http: aiohttp.ClientSession, smtp: SmtpFake
) -> None:
    """BOT_LINK_SIGNIN with Ana a console user named by her address: her link asks for a
    sign-in (401), refuses Bo's (403), answers as email:ana@... with hers; a link:<id> route,
    which no one can sign in as, is refused at create with the sentence (422)."""
    users = f"{ANA}:{ANA_PASSWORD},bo:{BO_PASSWORD}"
    bot = await start_bot(**_env(smtp), BOT_LINK_SIGNIN="true", BOT_CONSOLE_USERS=users)
    api = Api(http, bot.url)
    created = await api.created(approval("signed", _to(ANA), answerers=[f"email:{ANA}"]))
    (message,) = await _mailed(smtp, 1)
    link = _links(message)["Approve"]
    ana = {"Authorization": aiohttp.encode_basic_auth(ANA, ANA_PASSWORD)}
    bo = {"Authorization": aiohttp.encode_basic_auth("bo", BO_PASSWORD)}
    async with http.get(link) as anonymous:
        assert anonymous.status == 401 and "Basic" in anonymous.headers["WWW-Authenticate"]
    async with http.get(link, headers=bo) as as_bo:
        assert as_bo.status == 403
    async with http.get(link, headers=ana) as as_ana:
        assert as_ana.status == 200
        value = CSRF.search(await as_ana.text())
    assert value is not None
    form = {"csrf": value.group(1), "decision": "approve"}
    async with http.post(link, data=form, headers=bo, allow_redirects=False) as bo_sends:
        assert bo_sends.status == 403
    async with http.post(link, data=form, headers=ana, allow_redirects=False) as ana_sends:
        assert ana_sends.status == 303
    answered = await _state(api, created["id"])
    assert answered["status"] == "answered" and answered["answered_by"]["id"] == f"email:{ANA}"
    status, refused = await api.ask(
        approval("unsigned", {"surface": "link", "conversation": "c"}, answerers=["link:t-1"])
    )
    assert status == 422, refused
    assert "BOT_LINK_SIGNIN" in refused["error"]["message"]
    bot.assert_log_clean()
