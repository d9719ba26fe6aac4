"""The email surface against a real SMTP server on loopback (aiosmtpd), and its message."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest

from adapters.email import EmailSurface, parse_smtp_url
from adapters.email._message import message_id
from bot.api.links import AnswerLinks
from bot.app.probes import probe_smtp
from bot.app.settings import load_settings
from bot.client._bridge import route_of
from bot.contract.payloads import payload_of
from bot.human.tokens import SigningKey
from bot.questions.quorum import MayAnswer, stored_tally
from bot.questions.records import Question, RunRecord, RunStatus
from bot.service.delivering.surfaces import DeliveryError
from tests.fakes.smtp import SmtpFake
from tests.support import open_question

SENDER = "bot@bridge.example"
TO = "ana@example.com"
NOW = 1_900_000_000.0
# Who may answer, as the deliverer decides it: the mail shows links whoever it is.
ANYONE = MayAnswer(anyone=True)
HOSTILE = "Deploy <b>web</b> to prod\u202egnits <script>alert(1)</script>"


@pytest.fixture
def smtp() -> Iterator[SmtpFake]:
    fake = SmtpFake().start()
    yield fake
    fake.stop()


def _links() -> AnswerLinks:
    return AnswerLinks([SigningKey("k1", "s" * 40, "s" * 40)], public_url="https://bridge.example")


def _surface(fake: SmtpFake) -> EmailSurface:
    return EmailSurface(parse_smtp_url(fake.url), sender=SENDER, links=_links(), clock=lambda: NOW)


def _run(address: str = TO) -> RunRecord:
    return RunRecord(
        run_id="run_1",
        scope=f"email:{address}",
        surface="email",
        requester="api:ci",
        text="deploy",
        created_at=NOW,
        updated_at=NOW,
        conversation={"key": address, "thread": "", "reference": {"to": address}},
        status=RunStatus.REMOTE,
    )


def _approval() -> Question:
    payload = {
        "action": "deploy",
        "summary": HOSTILE,
        "arguments": {"service": "web <img src=x>", "version": "1.5"},
        "risk": "high",
    }
    return open_question("approval", payload, expires_at=NOW + 3600)


def _parts(message: EmailMessage) -> tuple[str, str]:
    text = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    assert text is not None and html is not None
    return str(text.get_content()), str(html.get_content())


async def test_a_question_is_mailed_as_text_and_html_with_one_link_per_answer(
    smtp: SmtpFake,
) -> None:
    """Subject names the action; both parts show the summary, risk, arguments, asker, expiry."""
    ref = await _surface(smtp).publish_question(
        _run(), _approval(), token="never-mailed", may=ANYONE
    )
    [message] = smtp.taken()
    assert message["To"] == TO and message["From"] == SENDER
    assert message["Subject"] == "Approval needed: deploy"
    assert message["Message-ID"] == message_id("int_1", TO, "bridge.example")
    assert ref == {"to": TO, "message_id": message["Message-ID"]}
    text, html = _parts(message)
    for part in (text, html):
        assert "high" in part and "api:ci" in part and "2030-03-17 18:46 UTC" in part
        assert "never-mailed" not in part  # the resume token stays inside the bridge
    links = _links()
    claims = [links.read(url.rpartition("/q/")[2]) for url in _urls(text)]
    assert [(c.answerer, c.preselect) for c in claims] == [
        (f"email:{TO}", "approve"),
        (f"email:{TO}", "reject"),
    ]
    assert _urls(text) == _hrefs(html)


async def test_agent_text_is_shown_never_obeyed_in_either_part(smtp: SmtpFake) -> None:
    """Tags are escaped in the HTML part and the bidi override is made visible in both."""
    await _surface(smtp).publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    text, html = _parts(smtp.taken()[0])
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img" not in html and "&lt;img src=x&gt;" in html
    assert "\u202e" not in text and "\u202e" not in html
    assert "⟨U+202E⟩" in text and "⟨U+202E⟩" in html


async def test_the_same_question_and_recipient_always_carry_the_same_message_id(
    smtp: SmtpFake,
) -> None:
    """A resend after a crash is folded by mail clients; another recipient gets its own id."""
    surface = _surface(smtp)
    await surface.publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    await surface.publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    await surface.publish_question(
        _run("bo@example.com"), _approval(), token="never-mailed", may=ANYONE
    )
    ids = [m["Message-ID"] for m in smtp.taken()]
    assert ids[0] == ids[1] != ids[2]


async def test_a_reminder_is_a_reply_to_the_question(smtp: SmtpFake) -> None:
    """In-Reply-To and References name the question's message; the links come again."""
    surface = _surface(smtp)
    await surface.publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    record = _record(reminders=1)
    await surface.post_nudge(_run(), record, {"kind": "reminded", "people": [f"email:{TO}"]})
    question, reminder = smtp.taken()
    assert reminder["In-Reply-To"] == question["Message-ID"]
    assert reminder["References"] == question["Message-ID"]
    assert reminder["Message-ID"] != question["Message-ID"]
    assert reminder["Subject"] == "Re: Approval needed: deploy"
    text, _ = _parts(reminder)
    assert text.startswith("Reminder:") and len(_urls(text)) == 2


async def test_no_reminder_goes_to_a_recipient_who_already_voted(smtp: SmtpFake) -> None:
    """Under a quorum, whoever has answered is not reminded."""
    record = _record(tally=stored_tally({"approve": [f"email:{TO}"], "reject": [], "names": {}}))
    await _surface(smtp).post_nudge(_run(), record, {"kind": "reminded", "people": []})
    assert smtp.taken() == []


@pytest.mark.parametrize(
    ("reply", "permanent"),
    [("451 4.3.0 Try again later", False), ("550 5.1.1 No such user", True)],
)
async def test_a_4xx_is_worth_a_retry_and_a_5xx_is_not(
    smtp: SmtpFake, reply: str, permanent: bool
) -> None:
    """The outbox retries a transient DeliveryError with backoff and fails a permanent one."""
    smtp.replies.append(reply)
    with pytest.raises(DeliveryError) as raised:
        await _surface(smtp).publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    assert raised.value.permanent is permanent
    assert reply.split()[0] in raised.value.reason
    assert smtp.taken() == []


async def test_a_server_that_is_not_there_is_worth_a_retry(smtp: SmtpFake) -> None:
    """A refused connection is transient: the relay may be restarting."""
    surface = _surface(smtp)
    smtp.stop()
    with pytest.raises(DeliveryError) as raised:
        await surface.publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    assert raised.value.permanent is False


async def test_check_opens_one_session_and_names_a_server_that_is_not_there(
    smtp: SmtpFake,
) -> None:
    """The probe opens a session and sends nothing; an unreachable one is one line on the URL."""
    settings = load_settings(BOT_SMTP_URL=smtp.url, BOT_EMAIL_FROM=SENDER)
    probe = await probe_smtp(settings.email)
    assert probe.problem == "" and probe.detail == "session ok"
    assert smtp.messages == []
    smtp.stop()
    probe = await probe_smtp(settings.email)
    assert probe.variable == "BOT_SMTP_URL" and "check the host and port" in probe.problem


def _record(**more: Any) -> Question:
    interrupt = _approval()
    fields: dict[str, Any] = {
        "interrupt_id": interrupt.interrupt_id,
        "run_id": interrupt.run_id,
        "scope": f"email:{TO}",
        "name": "approval",
        "tool_call_id": "call_1",
        "checkpoint_id": "",
        "payload": payload_of("approval", interrupt.payload),
        "issued_at": NOW,
        "expires_at": interrupt.expires_at,
        **more,
    }
    return Question(**fields)


def _urls(text: str) -> list[str]:
    return [word for line in text.splitlines() for word in line.split() if "/q/" in word]


def _hrefs(html: str) -> list[str]:
    return [chunk.partition('"')[0] for chunk in html.split('href="')[1:]]


def test_the_python_client_spells_an_email_route_as_email_address() -> None:
    """``email:<address>`` is the route; its key reads back the same."""
    route = route_of("email:ana@example.com")
    assert (route.surface, route.conversation) == ("email", "ana@example.com")
    assert route.key == "email:ana@example.com"
