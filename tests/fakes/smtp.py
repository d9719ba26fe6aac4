"""A real SMTP server on loopback (aiosmtpd), scripted to refuse as a mail server refuses.

It speaks SMTP as any server does (the bot's client is aiosmtplib, unmocked);
a test scripts the replies to the next DATA commands (``451`` to be tried
again, ``550`` refused for good), can ask for a sign-in (AUTH over plain
text, as a local relay in a test may allow, or only after TLS: STARTTLS or
implicit TLS with ``tests.fakes.tls``'s certificate), and can run a hook once a
message is taken and before the reply is sent: the moment a process killed
there has sent the message without knowing it was taken.
"""

from __future__ import annotations

import email
import email.policy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.e2e._server import free_port
from tests.fakes.tls import ServerCertificates


@dataclass
class SmtpFake:
    """Messages taken, in order; ``replies`` answer the next DATA commands before ``250``."""

    users: dict[str, str] | None = None
    replies: list[str] = field(default_factory=list)
    # Runs after a message is stored, before its reply (a test kills the sender there).
    on_taken: Callable[[EmailMessage], None] | None = None
    messages: list[EmailMessage] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    sessions: int = 0
    logins: list[str] = field(default_factory=list)
    port: int = 0
    # With certificates: "starttls" (required before AUTH and MAIL) or "tls" (implicit).
    tls: Literal["starttls", "tls"] | None = None
    certificates: ServerCertificates | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _controller: Controller | None = None

    def start(self) -> SmtpFake:
        self.port = free_port()
        kwargs: dict[str, Any] = {}
        if self.users is not None:
            kwargs = {
                "authenticator": self._authenticate,
                # Under implicit TLS aiosmtpd cannot see the TLS below it, and refuses
                # to require AUTH without requiring TLS: AUTH is then offered, not required
                # (the session is TLS from its first byte, and the bot signs in anyway).
                "auth_required": self.tls != "tls",
                "auth_require_tls": self.tls == "starttls",
            }
        if self.tls is not None:
            assert self.certificates is not None, "TLS needs tests.fakes.tls certificates"
            context = self.certificates.server_context()
            if self.tls == "starttls":
                kwargs |= {"tls_context": context, "require_starttls": True}
            else:
                kwargs |= {"ssl_context": context, "server_hostname": "127.0.0.1"}
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port, **kwargs)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    @property
    def url(self) -> str:
        """``BOT_SMTP_URL`` for it, signing in as its first user when it has users."""
        scheme = {None: "smtp", "starttls": "smtp+starttls", "tls": "smtps"}[self.tls]
        user = next(iter(self.users.items()), None) if self.users else None
        who = f"{user[0]}:{user[1]}@" if user else ""
        return f"{scheme}://{who}127.0.0.1:{self.port}"

    def taken(self) -> list[EmailMessage]:
        with self._lock:
            return list(self.messages)

    # aiosmtpd's handler hooks.
    async def handle_EHLO(
        self, server: Any, session: Any, envelope: Any, hostname: str, responses: list[str]
    ) -> list[str]:
        with self._lock:
            self.sessions += 1
        session.host_name = hostname
        return responses

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self._lock:
            reply = self.replies.pop(0) if self.replies else "250 Message accepted"
            if not reply.startswith("250"):
                self.refused.append(reply)
                return reply
            parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
            assert isinstance(parsed, EmailMessage)
            self.messages.append(parsed)
        if self.on_taken is not None:
            self.on_taken(parsed)
        return reply

    def _authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        if not isinstance(data, LoginPassword) or self.users is None:
            return AuthResult(success=False, handled=False)
        user, password = data.login.decode(), data.password.decode()
        ok = self.users.get(user) == password
        if ok:
            with self._lock:
                self.logins.append(user)
        return AuthResult(success=ok, handled=False)
