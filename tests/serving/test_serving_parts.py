"""The pieces behind the guards: host matching, JSON limits, sign-in, log redaction."""

from __future__ import annotations

import json
import logging

import pytest
from aiohttp import encode_basic_auth

from bot.app.settings import SettingsError, load_settings
from bot.logs import JsonFormatter, RedactingFilter
from bot.serving import AllowedHosts, JsonRejected, SignIn, loads_limited

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJpbnQifQ.c2lnbmF0dXJlc2lnbmF0dXJl"


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("127.0.0.1:3978", True),
        ("LOCALHOST:3978", True),
        ("[::1]:3978", True),
        ("127.0.0.1", False),
        ("127.0.0.1:3979", False),
        ("evil.example:3978", False),
        ("localhost.evil.example:3978", False),
        ("::1:3978", False),
        ("", False),
        ("user@127.0.0.1:3978", False),
    ],
)
def test_loopback_hosts_need_the_name_and_the_port(header: str, allowed: bool) -> None:
    """Only the three loopback names, with the bound port, pass."""
    assert AllowedHosts.loopback(3978).allows_host(header) is allowed


def test_public_hosts_come_from_the_public_url_and_the_list() -> None:
    """The public URL's host (default port) and listed host:port entries pass; others do not."""
    hosts = AllowedHosts.public("https://bot.example.com/", ["alt.example:8443"])
    assert hosts.allows_host("bot.example.com")
    assert hosts.allows_host("bot.example.com:443")
    assert not hosts.allows_host("bot.example.com:8080")
    assert hosts.allows_host("alt.example:8443")
    assert not hosts.allows_host("alt.example")
    assert hosts.allows_origin("https://bot.example.com")
    assert not hosts.allows_origin("null")
    assert not hosts.allows_origin("https://evil.example")


def test_json_depth_is_limited_without_recursion_errors() -> None:
    """Deep nesting is JsonRejected(too_deep) at the limit and far past Python's stack."""
    assert isinstance(loads_limited("[" * 32 + "]" * 32, max_depth=32), list)
    with pytest.raises(JsonRejected) as raised:
        loads_limited("[" * 33 + "]" * 33, max_depth=32)
    assert raised.value.too_deep
    with pytest.raises(JsonRejected) as deep:
        loads_limited("[" * 100_000 + "]" * 100_000)
    assert deep.value.too_deep
    with pytest.raises(JsonRejected) as broken:
        loads_limited("{not json")
    assert not broken.value.too_deep


async def test_sign_in_checks_each_person_and_keeps_no_plain_password() -> None:
    """Each user signs in with their own password; the object holds only hashes."""
    sign_in = SignIn({"ana": "ana's password!", "bo": "bo's password!!"})
    assert await sign_in.identify(encode_basic_auth("ana", "ana's password!")) == "ana"

    def hashed_again(_header: str) -> str | None:
        raise AssertionError("a verified header was hashed again")

    # The second time the header is remembered, not hashed again.
    sign_in._verify = hashed_again  # type: ignore[method-assign]
    assert await sign_in.identify(encode_basic_auth("ana", "ana's password!")) == "ana"
    del sign_in._verify  # back to the class's own
    assert await sign_in.identify(encode_basic_auth("ana", "bo's password!!")) is None
    assert await sign_in.identify(encode_basic_auth("eve", "ana's password!")) is None
    assert await sign_in.identify("Bearer x") is None
    assert await sign_in.identify("") is None
    assert "ana's password!" not in repr(vars(sign_in))


async def test_open_sign_in_is_the_operator() -> None:
    """Without users (loopback, no password) everyone is the operator, credentials or not."""
    sign_in = SignIn(None, operator="ops-laptop")
    assert not sign_in.required
    assert await sign_in.identify("") == "ops-laptop"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("ana", "name:password"),
        ("ana:short", "at least 12"),
        ("a b:long enough password", "name:password"),
        ("ana:long enough password,ana:another long one", "listed twice"),
        ('"ana"@example.com:long enough password', "a plain email address"),
        ("ana@example.com.:long enough password", "a plain email address"),
        ("<ana@example.com>:long enough password", "a plain email address"),
    ],
)
def test_console_users_are_checked_at_start(value: str, problem: str) -> None:
    """BOT_CONSOLE_USERS entries need a plain name and a 12+ character password."""
    with pytest.raises(SettingsError) as raised:
        load_settings(BOT_CONSOLE_USERS=value)
    (line,) = raised.value.lines
    assert line.startswith("BOT_CONSOLE_USERS")
    assert problem in line
    password = value.split(":", 1)[1].split(",")[0] if ":" in value else ""
    assert not password or password not in line, "a password was echoed"


def test_a_console_user_may_be_named_by_a_plain_email_address() -> None:
    """ana@example.com:<password> signs in as that name (an emailed link's recipient)."""
    settings = load_settings(
        BOT_CONSOLE_USERS="ana@example.com:long enough password,bo:bo pass 1234"
    )
    assert settings.console.accounts() == {
        "ana@example.com": "long enough password",
        "bo": "bo pass 1234",
    }


@pytest.mark.parametrize("url", ["ftp://models.example", "api.openai.com/v1", "http://x/v1?key=1"])
def test_a_malformed_model_url_is_refused(url: str) -> None:
    """OPENAI_BASE_URL must be an absolute http(s) URL without a query."""
    with pytest.raises(SettingsError) as raised:
        load_settings(OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-test")
    assert raised.value.lines[0].startswith("OPENAI_BASE_URL: use the API's base URL")


def test_a_public_bind_needs_its_host_names() -> None:
    """BOT_HOST=0.0.0.0 without BOT_PUBLIC_URL or BOT_ALLOWED_HOSTS is one clear line."""
    with pytest.raises(SettingsError) as raised:
        load_settings(BOT_HOST="0.0.0.0", BOT_CONSOLE=False)  # noqa: S104 - validated only
    assert any("set BOT_PUBLIC_URL" in line for line in raised.value.lines)


def test_every_field_of_a_record_is_redacted() -> None:
    """Message, args, nested extras, odd objects, traceback: no token or secret survives."""

    class Opaque:
        def __str__(self) -> str:
            return f"holder of {TOKEN}"

    try:
        raise ValueError(f"bad {TOKEN}")
    except ValueError:
        record = logging.getLogger("t").makeRecord(
            "t",
            logging.ERROR,
            __file__,
            1,
            "got %s",
            (TOKEN,),
            exc_info=__import__("sys").exc_info(),
            extra={
                "first_request_line": f"GET /?token={TOKEN} HTTP/1.1",
                "request_header": {"Referer": f"http://x/?t={TOKEN}", "User-Agent": TOKEN},
                "items": [TOKEN, ("supersecretvalue1",)],
                "opaque": Opaque(),
                "count": 3,
            },
        )
    RedactingFilter(["supersecretvalue1"]).filter(record)
    line = JsonFormatter().format(record)
    assert TOKEN not in line
    assert TOKEN.rsplit(".", 1)[1] not in line
    assert "supersecretvalue1" not in line
    entry = json.loads(line)
    assert entry["count"] == 3
    assert entry["request_header"]["User-Agent"] == "[token]"
    assert "[token]" in entry["error"]


def test_each_configured_secret_is_hidden_on_its_own() -> None:
    """Every signing key and every console password is a secret of its own for the filter."""
    settings = load_settings(
        BOT_SIGNING_KEYS="new:" + "n" * 40 + ",old:" + "o" * 40,
        BOT_CONSOLE_USERS="ana:ana's long password,bo:bo's long password",
    )
    hidden = settings.secrets()
    assert {"n" * 40, "o" * 40, "ana's long password", "bo's long password"} <= set(hidden)
    record = logging.makeLogRecord({"msg": "oops %s", "args": ("bo's long password",)})
    RedactingFilter(hidden).filter(record)
    assert "bo's long password" not in JsonFormatter().format(record)


def test_an_origin_must_have_the_scheme_its_name_is_served_over() -> None:
    """https://127.0.0.1:P is another server than ours (http); a public name keeps its scheme."""
    local = AllowedHosts.loopback(3978)
    assert local.allows_origin("http://127.0.0.1:3978")
    assert local.allows_origin("http://localhost:3978")
    assert not local.allows_origin("https://127.0.0.1:3978")
    assert not local.allows_origin("https://[::1]:3978")
    public = AllowedHosts.public("https://bot.example.com/", ["alt.example:8443"])
    assert public.allows_origin("https://bot.example.com")
    assert not public.allows_origin("http://bot.example.com")
    # A listed name says no scheme: either is taken, as before.
    assert public.allows_origin("https://alt.example:8443")
    tunnel = local.merged(AllowedHosts.public("https://abc.tunnel.example"))
    assert tunnel.allows_origin("https://abc.tunnel.example")
    assert not tunnel.allows_origin("http://abc.tunnel.example")
    assert not tunnel.allows_origin("https://127.0.0.1:3978")
