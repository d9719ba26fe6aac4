"""The agents API (``/v1``): any agent asks a person through the bridge over HTTP.

The boundary: HTTP, keys and the API's objects live here; a question it
asks goes through the one lifecycle (``bot.questions``) like any other, so
posting, answering, expiry, admin commands and the outbox are not repeated.
"""

from bot.api._errors import NO_KEY, OTHER_ORIGIN, TOO_LARGE, WRONG_KEY, ApiRefusal
from bot.api._http import API_KEYS, API_QUESTIONS, envelope, mount_api
from bot.api._keys import (
    NO_ROUTES,
    KeyRing,
    check_creates_per_minute,
    check_name,
    check_route,
    hash_key,
    new_key,
    new_key_id,
    settle_keys,
)
from bot.api._page import mount_link_page
from bot.api._questions import ApiQuestions
from bot.api._settings import ApiSettings, LinkSettings
from bot.api._waiters import Waiters
from bot.api._wiring import serve_api

__all__ = [
    "API_KEYS",
    "API_QUESTIONS",
    "NO_KEY",
    "NO_ROUTES",
    "OTHER_ORIGIN",
    "TOO_LARGE",
    "WRONG_KEY",
    "ApiQuestions",
    "ApiRefusal",
    "ApiSettings",
    "KeyRing",
    "LinkSettings",
    "Waiters",
    "check_creates_per_minute",
    "check_name",
    "check_route",
    "envelope",
    "hash_key",
    "mount_api",
    "mount_link_page",
    "new_key",
    "new_key_id",
    "serve_api",
    "settle_keys",
]
