"""The serving layer's pieces built from settings: which hosts, who signs in."""

from __future__ import annotations

import getpass

from aiohttp import hdrs, web

from bot.config import Settings, parse_console_users
from bot.messages import SIGN_IN_NEEDED
from bot.serving._auth import SignIn
from bot.serving._guards import refusal
from bot.serving._hosts import AllowedHosts
from bot.serving._keys import SIGN_IN

CHALLENGE = 'Basic realm="bot", charset="UTF-8"'


def allowed_hosts_for(settings: Settings) -> AllowedHosts:
    """Loopback names on a loopback bind; otherwise only the names people were given."""
    if settings.console_is_local:
        extra = list(settings.allowed_hosts)
        if settings.public_url:
            # A tunnel or local proxy in front of a loopback bind forwards its own name.
            extra += AllowedHosts.public(settings.public_url).names()
        return AllowedHosts.loopback(settings.port, extra=extra)
    return AllowedHosts.public(settings.public_url, settings.allowed_hosts)


def sign_in_for(settings: Settings) -> SignIn:
    """Per-person users; the shared password is one user, ``operator``; else the OS user."""
    if settings.console_users is not None:
        return SignIn(parse_console_users(settings.console_users.get_secret_value()))
    if settings.console_password is not None:
        return SignIn({"operator": settings.console_password.get_secret_value()})
    if not settings.console_is_local:
        return SignIn({})  # nobody can sign in, so nothing guarded is open
    return SignIn(None, operator=_operator_name())


async def refuse_unless_signed_in(request: web.Request) -> web.Response | None:
    """None for a signed-in request (or an open console); else the 401 to send."""
    if await request.app[SIGN_IN].identify(request.headers.get(hdrs.AUTHORIZATION, "")) is not None:
        return None
    response = refusal(401, SIGN_IN_NEEDED)
    response.headers[hdrs.WWW_AUTHENTICATE] = CHALLENGE
    return response


def _operator_name() -> str:
    try:
        return getpass.getuser() or "operator"
    except (OSError, KeyError):  # no user name in the environment or passwd
        return "operator"
