"""SMTP over STARTTLS and implicit TLS, against a real server with a private CA's certificate.

The bot verifies the server's certificate as any TLS client does: trusted
through ``SSL_CERT_FILE`` (the test's CA), a session signs in only after
TLS and mails the question; untrusted, ``check`` and the outbox say so in one
sentence naming ``SSL_CERT_FILE``, and nothing is signed in or sent.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from aiosmtplib.protocol import SMTPProtocol

from adapters.email import EmailSurface, parse_smtp_url
from bot.app.probes import probe_smtp
from bot.app.settings import load_settings
from bot.service.delivering.surfaces import DeliveryError
from tests.adapters.email.test_email_surface import ANYONE, SENDER, _approval, _links, _run
from tests.e2e._server import ROOT
from tests.fakes.smtp import SmtpFake
from tests.fakes.tls import ServerCertificates, make_certificates

Security = Literal["starttls", "tls"]
USERS = {"bridge": "relay-password"}


@pytest.fixture
def certificates(tmp_path: Path) -> ServerCertificates:
    return make_certificates(tmp_path / "tls")


@pytest.fixture(params=["starttls", "tls"])
def smtp(request: pytest.FixtureRequest, certificates: ServerCertificates) -> Iterator[SmtpFake]:
    fake = SmtpFake(users=dict(USERS), tls=request.param, certificates=certificates).start()
    yield fake
    fake.stop()


class ClientConnections:
    """The bot's SMTP connections in this test, and an event once all have closed.

    A TLS connection closes in steps (close_notify each way, then the socket) that
    the loop runs after ``quit()`` returns; a test that ended before them would
    leave a socket for the collector to warn about in some later test. The
    protocol hears ``connection_lost`` once its socket is closed.
    """

    def __init__(self) -> None:
        self._open: set[SMTPProtocol] = set()
        self.seen: set[SMTPProtocol] = set()
        self._closed = asyncio.Event()
        self._closed.set()

    def made(self, protocol: SMTPProtocol) -> None:
        # Twice for a STARTTLS connection (plain, then TLS): one protocol, one entry.
        self._open.add(protocol)
        self.seen.add(protocol)
        self._closed.clear()

    def lost(self, protocol: SMTPProtocol) -> None:
        self._open.discard(protocol)
        if not self._open:
            self._closed.set()

    async def all_closed(self) -> int:
        """Once every connection opened so far has closed: how many were opened."""
        await asyncio.wait_for(self._closed.wait(), 30)
        return len(self.seen)


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> ClientConnections:
    """Every aiosmtplib connection this test opens, followed to its close."""
    seen = ClientConnections()
    made, lost = SMTPProtocol.connection_made, SMTPProtocol.connection_lost

    def connection_made(protocol: SMTPProtocol, transport: Any) -> None:
        seen.made(protocol)
        made(protocol, transport)

    def connection_lost(protocol: SMTPProtocol, error: Exception | None) -> None:
        lost(protocol, error)
        seen.lost(protocol)

    monkeypatch.setattr(SMTPProtocol, "connection_made", connection_made)
    monkeypatch.setattr(SMTPProtocol, "connection_lost", connection_lost)
    return seen


def _surface(fake: SmtpFake) -> EmailSurface:
    return EmailSurface(parse_smtp_url(fake.url), sender=SENDER, links=_links(), clock=lambda: 0.0)


async def test_a_trusted_server_signs_in_after_tls_and_takes_the_question(
    smtp: SmtpFake,
    certificates: ServerCertificates,
    monkeypatch: pytest.MonkeyPatch,
    connections: ClientConnections,
) -> None:
    """With the CA in SSL_CERT_FILE: check signs in (the server takes AUTH only over TLS),
    and the question is mailed; both sessions close their connections."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca))
    settings = load_settings(BOT_SMTP_URL=smtp.url, BOT_EMAIL_FROM=SENDER)
    probe = await probe_smtp(settings.email)
    assert (probe.problem, probe.detail) == ("", "session ok, signed in as bridge")
    await _surface(smtp).publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    assert [m["Subject"] for m in smtp.taken()] == ["Approval needed: deploy"]
    assert smtp.logins == ["bridge", "bridge"]
    assert await connections.all_closed() == 2  # check's session, then the mail's


async def test_an_untrusted_certificate_is_one_sentence_and_nothing_is_sent(
    smtp: SmtpFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the CA: check names the certificate and SSL_CERT_FILE; the outbox's failure
    says the same and is worth a retry; no password crossed and no message was taken."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    settings = load_settings(BOT_SMTP_URL=smtp.url, BOT_EMAIL_FROM=SENDER)
    probe = await probe_smtp(settings.email)
    assert probe.variable == "BOT_SMTP_URL"
    assert probe.problem.startswith(f"TLS with 127.0.0.1:{smtp.port} failed: its certificate")
    assert "is not trusted" in probe.problem and "SSL_CERT_FILE" in probe.problem
    with pytest.raises(DeliveryError) as raised:
        await _surface(smtp).publish_question(_run(), _approval(), token="never-mailed", may=ANYONE)
    assert raised.value.permanent is False
    assert "certificate is not trusted" in raised.value.reason
    assert "relay-password" not in probe.problem + raised.value.reason
    assert smtp.logins == [] and smtp.taken() == []


async def test_check_in_a_real_process_trusts_the_ca_it_is_given(
    smtp: SmtpFake, certificates: ServerCertificates, tmp_path: Path
) -> None:
    """``python -m bot check`` with SSL_CERT_FILE set: the email line says it signed in;
    without it, exit 2 and the one sentence on stderr, the password in neither."""
    base = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "SLACK_", "SSL_"))},
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}",
        "BOT_DATA_DIR": str(tmp_path / "var"),
        "BOT_SMTP_URL": smtp.url,
        "BOT_EMAIL_FROM": SENDER,
    }

    async def check(**more: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "check",
            cwd=ROOT,
            env={**base, **more},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()

    code, out, err = await check(SSL_CERT_FILE=str(certificates.ca))
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("email:")]
    assert line.endswith(f"bridge@127.0.0.1:{smtp.port}; session ok, signed in as bridge"), line
    code, out, err = await check()
    assert code == 2, out
    assert "certificate is not trusted" in err and "SSL_CERT_FILE" in err
    assert "relay-password" not in out + err
