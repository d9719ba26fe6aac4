"""The HTTP server's defences, shared by every surface mounted on the app.

Host allow-list, tokens refused in URLs, body deadlines and limits, JSON limits,
JSON errors under ``/api``, an access log without queries, sign-in, and
the rate limits any door counts its callers by.
Surfaces use these; they never re-implement them.
"""

from bot.serving._access import AccessLog
from bot.serving._auth import SignIn
from bot.serving._bodies import LARGER_BODIES, LargerBodies, allow_larger_bodies
from bot.serving._guards import DEFAULT_MAX_DEPTH, JsonRejected, http_guards, loads_limited, refusal
from bot.serving._hosts import LOOPBACK_NAMES, AllowedHosts
from bot.serving._keys import ALLOWED_HOSTS, SIGN_IN
from bot.serving._malformed import quiet_malformed_requests
from bot.serving._rates import RateLimits, Throttled, client_of
from bot.serving._settings import (
    CHALLENGE,
    ServingSettings,
    allowed_hosts_for,
    refuse_unless_signed_in,
    sign_in_for,
)

__all__ = [
    "ALLOWED_HOSTS",
    "CHALLENGE",
    "DEFAULT_MAX_DEPTH",
    "LARGER_BODIES",
    "LOOPBACK_NAMES",
    "SIGN_IN",
    "AccessLog",
    "AllowedHosts",
    "JsonRejected",
    "LargerBodies",
    "RateLimits",
    "ServingSettings",
    "SignIn",
    "Throttled",
    "allow_larger_bodies",
    "allowed_hosts_for",
    "client_of",
    "http_guards",
    "loads_limited",
    "quiet_malformed_requests",
    "refusal",
    "refuse_unless_signed_in",
    "sign_in_for",
]
