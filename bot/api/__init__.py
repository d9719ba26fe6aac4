"""The agents API (``/v1``): any agent asks a person through the bridge over HTTP.

The boundary: HTTP, keys and the API's objects live here; a question it
asks goes through the one lifecycle (``bot.questions``) like any other, so
posting, answering, expiry, admin commands and the outbox are not repeated.
"""

from bot.api._errors import ApiError
from bot.api._http import API_KEYS, API_QUESTIONS, mount_api
from bot.api._keys import KeyRing, hash_key, new_key, settle_keys
from bot.api._page import mount_link_page
from bot.api._questions import ApiQuestions
from bot.api._settings import ApiSettings, LinkSettings
from bot.api._waiters import Waiters
from bot.api._wiring import serve_api

__all__ = [
    "API_KEYS",
    "API_QUESTIONS",
    "ApiError",
    "ApiQuestions",
    "ApiSettings",
    "KeyRing",
    "LinkSettings",
    "Waiters",
    "hash_key",
    "mount_api",
    "mount_link_page",
    "new_key",
    "serve_api",
    "settle_keys",
]
