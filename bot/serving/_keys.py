"""Typed keys for what the serving layer puts on the aiohttp application."""

from __future__ import annotations

from aiohttp import web

from bot.serving._auth import SignIn
from bot.serving._hosts import AllowedHosts

ALLOWED_HOSTS = web.AppKey("allowed_hosts", AllowedHosts)
SIGN_IN = web.AppKey("sign_in", SignIn)
