"""BOT_SMTP_URL and BOT_EMAIL_FROM: every misspelling is one line at start, the password hidden."""

from __future__ import annotations

import pytest

from bot.app.settings import SettingsError, load_settings

SENDER = "bot@bridge.example"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("smtpx://relay:25", "has the scheme 'smtpx'"),
        ("smtp://", "names no host"),
        ("smtp://user:pw@relay:25", "sends in the clear"),
        ("smtps://relay:465", "needs user:password@"),
        ("smtp+starttls://user@relay:587", "needs user:password@"),
        ("smtp://relay:99999", "is not a URL"),
        ("smtp://relay:25/path", "has a path"),
    ],
)
def test_a_misspelt_smtp_url_is_one_line_naming_it(url: str, says: str) -> None:
    """The line names the variable and says how to write it."""
    with pytest.raises(SettingsError) as raised:
        load_settings(BOT_SMTP_URL=url, BOT_EMAIL_FROM=SENDER)
    [line] = raised.value.lines
    assert line.startswith("BOT_SMTP_URL: ") and says in line


def test_each_scheme_is_read_with_its_default_port() -> None:
    """smtp:// is plain on 25, smtp+starttls:// 587, smtps:// TLS on 465; passwords unquoted."""
    plain = load_settings(BOT_SMTP_URL="smtp://relay", BOT_EMAIL_FROM=SENDER).email.server()
    start = load_settings(
        BOT_SMTP_URL="smtp+starttls://me:p%40ss@mail.example", BOT_EMAIL_FROM=SENDER
    ).email.server()
    tls = load_settings(
        BOT_SMTP_URL="smtps://me:pw@mail.example:2465", BOT_EMAIL_FROM=SENDER
    ).email.server()
    assert plain is not None and (plain.security, plain.port) == ("plain", 25)
    assert start is not None and (start.security, start.port, start.password) == (
        "starttls",
        587,
        "p@ss",
    )
    assert tls is not None and (tls.security, tls.port) == ("tls", 2465)
    assert "p@ss" not in start.shown


def test_the_password_is_one_of_the_secrets_the_logs_hide() -> None:
    """The whole URL and the password on its own are both hidden."""
    url = "smtps://me:s3cret-pass@mail.example"
    secrets = load_settings(BOT_SMTP_URL=url, BOT_EMAIL_FROM=SENDER).secrets()
    assert url in secrets and "s3cret-pass" in secrets


def test_a_server_without_a_sender_and_a_bad_sender_are_refused() -> None:
    """BOT_EMAIL_FROM is required with BOT_SMTP_URL, and must be an address."""
    with pytest.raises(SettingsError) as missing:
        load_settings(BOT_SMTP_URL="smtp://relay:25")
    assert "BOT_EMAIL_FROM" in missing.value.lines[0]
    with pytest.raises(SettingsError) as bad:
        load_settings(BOT_SMTP_URL="smtp://relay:25", BOT_EMAIL_FROM="not an address")
    assert bad.value.lines[0].startswith("BOT_EMAIL_FROM: ")


def test_a_sender_alone_is_a_warning() -> None:
    """BOT_EMAIL_FROM without a server starts, and says that nothing is mailed."""
    settings = load_settings(BOT_EMAIL_FROM=SENDER)
    assert not settings.email.enabled
    assert any("BOT_EMAIL_FROM is set without BOT_SMTP_URL" in w for w in settings.warnings({}))
