"""The serving layer's settings, and its pieces built from them: which hosts, who signs in.

Where the server listens and which names it answers to are the serving
layer's own; who may sign in is given to it (the console's accounts), so
this layer never reads another component's settings.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping

from aiohttp import hdrs, web
from pydantic import Field

from bot.component_settings import ComponentSettings, CsvList
from bot.service.delivering.messages import SIGN_IN_NEEDED, SIGN_IN_THROTTLED
from bot.serving._auth import FAILURES_PER_MINUTE, SignIn
from bot.serving._guards import refusal
from bot.serving._hosts import LOOPBACK_NAMES, AllowedHosts
from bot.serving._keys import SIGN_IN
from bot.serving._rates import Throttled, client_of

CHALLENGE = 'Basic realm="bot", charset="UTF-8"'


class ServingSettings(ComponentSettings):
    """Where the HTTP server listens, the names it answers to, and its request deadlines."""

    port: int = Field(3978, alias="PORT", ge=1, le=65535)
    host: str = Field("127.0.0.1", alias="BOT_HOST")
    public_url: str | None = Field(None, alias="BOT_PUBLIC_URL", pattern=r"^https?://[^/?#@]+/?")
    allowed_hosts: CsvList = Field(default_factory=list, alias="BOT_ALLOWED_HOSTS")
    header_timeout_seconds: float = Field(10.0, alias="BOT_HEADER_TIMEOUT_SECONDS", gt=0)
    body_timeout_seconds: float = Field(10.0, alias="BOT_BODY_TIMEOUT_SECONDS", gt=0)
    # Per client address (the peer's: behind a proxy, the proxy's), in each process.
    sign_in_failures_per_minute: int = Field(
        FAILURES_PER_MINUTE, alias="BOT_SIGN_IN_FAILURES_PER_MINUTE", ge=1
    )

    @property
    def is_local(self) -> bool:
        """Bound to loopback: only this machine can reach the server."""
        return self.host in LOOPBACK_NAMES


def allowed_hosts_for(settings: ServingSettings) -> AllowedHosts:
    """Loopback names on a loopback bind; otherwise only the names people were given."""
    if settings.is_local:
        local = AllowedHosts.loopback(settings.port, extra=settings.allowed_hosts)
        if settings.public_url:
            # A tunnel or local proxy in front of a loopback bind forwards its own name.
            return local.merged(AllowedHosts.public(settings.public_url))
        return local
    return AllowedHosts.public(settings.public_url, settings.allowed_hosts)


def sign_in_for(
    accounts: Mapping[str, str] | None,
    *,
    local: bool,
    failures_per_minute: int = FAILURES_PER_MINUTE,
) -> SignIn:
    """The accounts given (name to password); without any, the OS user on loopback.

    Beyond loopback, no accounts means nobody can sign in, so nothing
    guarded is open.
    """
    if accounts is not None:
        return SignIn(accounts, failures_per_minute=failures_per_minute)
    if not local:
        return SignIn({}, failures_per_minute=failures_per_minute)
    return SignIn(None, operator=_operator_name())


async def refuse_unless_signed_in(request: web.Request) -> web.Response | None:
    """None for a signed-in request (or an open console); else the 401 (or 429) to send."""
    authorization = request.headers.get(hdrs.AUTHORIZATION, "")
    try:
        who = await request.app[SIGN_IN].identify(authorization, client=client_of(request))
    except Throttled as throttled:
        wait = throttled.retry_after
        sentence = SIGN_IN_THROTTLED.format(seconds=wait)
        return refusal(429, sentence, **{hdrs.RETRY_AFTER: str(wait)})
    if who is not None:
        return None
    response = refusal(401, SIGN_IN_NEEDED)
    response.headers[hdrs.WWW_AUTHENTICATE] = CHALLENGE
    return response


def _operator_name() -> str:
    try:
        return getpass.getuser() or "operator"
    except (OSError, KeyError):  # no user name in the environment or passwd
        return "operator"
