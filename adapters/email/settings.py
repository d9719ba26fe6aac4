"""Email's settings: the SMTP server to send through (``BOT_SMTP_URL``) and the sender.

The URL is read once, at start, so a misspelt scheme or a missing password
is one line naming the variable, never a failed send an hour later. Its
password is a secret: the whole URL and the password on its own are kept
out of the logs (``Hidden``).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from email.errors import HeaderParseError
from email.headerregistry import Address
from typing import Annotated, Literal
from urllib.parse import unquote, urlsplit

from pydantic import AfterValidator, Field, SecretStr, field_validator, model_validator

from bot.component_settings import ComponentSettings, Hidden

Security = Literal["plain", "starttls", "tls"]
SCHEMES: dict[str, tuple[Security, int]] = {
    "smtp": ("plain", 25),
    "smtp+starttls": ("starttls", 587),
    "smtps": ("tls", 465),
}
HOW = (
    "write smtp://host:port (plain, a local relay only), "
    "smtp+starttls://user:password@host:587 or smtps://user:password@host:465"
)


@dataclass(frozen=True, slots=True)
class SmtpServer:
    """Where and how to send: the host, the port, the transport's security, the sign-in."""

    host: str
    port: int
    security: Security
    username: str | None = None
    password: str | None = None

    @property
    def shown(self) -> str:
        """The server as ``check`` prints it: never the password."""
        who = f"{self.username}@" if self.username else ""
        return f"{self.security} {who}{self.host}:{self.port}"


def parse_smtp_url(text: str) -> SmtpServer:
    """``BOT_SMTP_URL`` as a server, or ValueError saying how to write it."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        raise ValueError(f"is not a URL; {HOW}") from None
    scheme = SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        raise ValueError(f"has the scheme {parts.scheme or 'none'!r}; {HOW}")
    security, default_port = scheme
    if not parts.hostname:
        raise ValueError(f"names no host; {HOW}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"has a path or a query, which SMTP does not use; {HOW}")
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    if security == "plain" and username:
        # Plain SMTP would send the password in the clear.
        raise ValueError(
            "smtp:// sends in the clear, so it takes no user or password; use "
            "smtp+starttls:// or smtps:// to sign in"
        )
    if security != "plain" and (not username or not password):
        raise ValueError(
            f"{parts.scheme}:// needs user:password@ before the host; the server signs in "
            "everyone it relays for"
        )
    return SmtpServer(parts.hostname, port or default_port, security, username, password)


def untrusted_certificate(error: BaseException) -> str:
    """What to do when TLS with the server failed on its certificate; "" for any other error.

    aiosmtplib raises the verification error itself on STARTTLS and wraps it in a
    connect error on implicit TLS, so the chain of causes is searched.
    """
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return (
                f"its certificate is not trusted ({seen.verify_message}); if a private CA "
                "signs it, point SSL_CERT_FILE at that CA's certificate (PEM)"
            )
        seen = seen.__cause__ or seen.__context__
    return ""


def _parsed(value: SecretStr | None) -> SecretStr | None:
    if value is not None:
        parse_smtp_url(value.get_secret_value())
    return value


def _password(text: str) -> list[str]:
    password = parse_smtp_url(text).password
    return [password] if password else []


# Its own check instead of the blank one; the password inside is hidden on its own too.
SmtpUrl = Annotated[SecretStr | None, AfterValidator(_parsed), Hidden(_password)]


class EmailSettings(ComponentSettings):
    """Email is on when ``BOT_SMTP_URL`` is set; ``BOT_EMAIL_FROM`` is then required."""

    smtp_url: SmtpUrl = Field(None, alias="BOT_SMTP_URL")
    sender: str | None = Field(None, alias="BOT_EMAIL_FROM")
    timeout_seconds: float = Field(30.0, alias="BOT_SMTP_TIMEOUT_SECONDS", gt=0, le=300)

    @field_validator("sender")
    @classmethod
    def _an_address(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            address = Address(addr_spec=value.strip())
        except (HeaderParseError, ValueError, IndexError):
            address = None
        if address is None or not address.username or "." not in address.domain:
            raise ValueError(f"{value!r} is not an email address; write bot@example.com")
        return address.addr_spec

    @model_validator(mode="after")
    def _sender_with_server(self) -> EmailSettings:
        if self.smtp_url is not None and self.sender is None:
            raise ValueError(
                "BOT_SMTP_URL is set without BOT_EMAIL_FROM; set the address emails are sent from"
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.smtp_url is not None

    def server(self) -> SmtpServer | None:
        if self.smtp_url is None:
            return None
        return parse_smtp_url(self.smtp_url.get_secret_value())

    def warnings(self) -> list[str]:
        if self.sender is not None and self.smtp_url is None:
            return ["BOT_EMAIL_FROM is set without BOT_SMTP_URL, so no email is sent"]
        return []
