"""API keys: the keys a deployment lists in ``BOT_API_KEYS`` and those made with ``api-key``.

Only a key's SHA-256 is compared or kept: a key from the store is never
held in clear, and one from the environment is hashed when the settings
are read. A key is long and random, so a plain hash (not a slow one) is
the right tool: there is nothing to guess by brute force.

A key is known by its id, never its name: a stored key gets a random id
when it is made, and a listed one an id derived from its hash, so every
replica and every restart computes the same one without storing it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any

from bot.contract.identity import PLAIN_ADDRESS, email_address
from bot.errors import BotError
from bot.questions.records import ApiKey
from bot.stores.ports import ApiRecords

MIN_KEY_CHARS = 32
KEY_PREFIX = "hitl_"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
SURFACES = ("slack", "teams", "console", "email", "link")
# Questions a key may create a minute unless it names its own number: far above
# what a person can answer, far below what a runaway loop would ask.
DEFAULT_CREATES_PER_MINUTE = 60
MAX_CREATES_PER_MINUTE = 100_000
_RATE = "creates_per_minute"
# A key with no routes named is refused rather than allowed everywhere: a key
# pasted for one channel must not quietly post in every other one.
NO_ROUTES = (
    "the key {name!r} names no routes: name the routes this key may post to "
    "({example}), or '*' for everywhere"
)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key_id() -> str:
    """A stored key's id: random, so a key made again under a revoked name is another key."""
    return "key_" + secrets.token_hex(12)


def configured_key_id(key_hash: str) -> str:
    """A ``BOT_API_KEYS`` entry's id, from its hash: the same on every replica and restart.

    The hash, not the name: the secret is what the key is, so a new secret under
    an old name is a new key (as revoking and making one is), while renaming the
    entry keeps its questions. A hash of the hash says nothing of the secret.
    """
    return "key_" + hashlib.sha256(f"api key id\0{key_hash}".encode()).hexdigest()[:24]


def new_key() -> str:
    """A fresh random key, shown once by ``api-key create``."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def check_name(name: str) -> str:
    """``name`` if it is a key name (letters, digits, ``-_.``, at most 64), else ValueError."""
    if not name or len(name) > 64 or not set(name) <= _NAME_CHARS:
        raise ValueError(f"{name!r} is not a key name: use 1-64 letters, digits, '-', '_' or '.'")
    return name


def check_route(route: str) -> str:
    """``route`` if it is ``*``, ``surface:*`` or ``surface:conversation`` (an email route's
    address in its one spelling, lowercased), else ValueError."""
    surface, sep, conversation = route.partition(":")
    if surface == "email" and conversation != "*":
        address = email_address(conversation)
        if address is None:
            raise ValueError(
                f"{route!r} is not a route: give an email route one plain address, such as "
                f"email:ana@example.com ({PLAIN_ADDRESS}), or email:*"
            )
        return f"email:{address}"
    if route == "*" or (sep and surface in SURFACES and conversation):
        return route
    raise ValueError(
        f"{route!r} is not a route: use '*', 'slack:*', 'slack:C123', 'teams:<id>', "
        "'console:<conversation>', 'email:<address>' or 'link:*'"
    )


def check_creates_per_minute(value: object) -> int:
    """``value`` if it is a whole number of creates a minute (1 to 100,000), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"creates_per_minute must be a whole number, not {value!r}")
    if not 1 <= value <= MAX_CREATES_PER_MINUTE:
        raise ValueError(
            f"creates_per_minute must be from 1 to {MAX_CREATES_PER_MINUTE:,}, not {value}"
        )
    return value


def keys_from_setting(text: str) -> tuple[ApiKey, ...]:
    """``BOT_API_KEYS`` (a JSON list of {name, key, routes, creates_per_minute?}) as keys;
    ValueError on a fault."""
    try:
        entries: Any = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError('is not JSON; write a list like [{"name": "ci", ...}]') from None
    if not isinstance(entries, list):
        raise ValueError("must be a JSON list of {name, key, routes}")
    keys: list[ApiKey] = []
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) - {"name", "key", "routes", _RATE}:
            raise ValueError(
                f"entry {n} must be an object with name, key, routes and "
                "optionally creates_per_minute"
            )
        name, key, routes = entry.get("name"), entry.get("key"), entry.get("routes")
        if not isinstance(name, str) or not isinstance(key, str):
            raise ValueError(f"entry {n} needs a name and a key (strings) and a routes list")
        if not routes:
            example = '"routes": ["slack:C123", "console:ops"]'
            raise ValueError(NO_ROUTES.format(name=name, example=example))
        if not isinstance(routes, list):
            raise ValueError(f"entry {n} needs a name and a key (strings) and a routes list")
        if len(key) < MIN_KEY_CHARS:
            raise ValueError(f"the key of {name!r} is shorter than {MIN_KEY_CHARS} characters")
        check_name(name)
        checked = tuple(check_route(str(route)) for route in routes)
        rate = None if entry.get(_RATE) is None else check_creates_per_minute(entry[_RATE])
        digest = hash_key(key)
        keys.append(
            ApiKey(
                name,
                digest,
                checked,
                creates_per_minute=rate,
                key_id=configured_key_id(digest),
            )
        )
    names = [key.name for key in keys]
    if len(set(names)) != len(names):
        raise ValueError("names a key twice; key names must be unique")
    if len({key.key_hash for key in keys}) != len(keys):
        raise ValueError("lists one key twice; give each entry its own key")
    return tuple(keys)


def secrets_in_setting(text: str) -> list[str]:
    """Each key ``BOT_API_KEYS`` holds, for the log filter (best effort on a bad value)."""
    try:
        entries = json.loads(text)
    except json.JSONDecodeError:
        return []
    if not isinstance(entries, list):
        return []
    return [str(e["key"]) for e in entries if isinstance(e, dict) and isinstance(e.get("key"), str)]


# Both would sign in, as two keys whose questions the other cannot see, under one name
# that logs, audit and the requester show: one is a mistake, so neither is guessed.
BOTH_PLACES = (
    "BOT_API_KEYS and the store both hold a key named {name!r}; remove it from "
    "BOT_API_KEYS or revoke the stored one (python -m bot api-key revoke {name})"
)


async def settle_keys(configured: Sequence[ApiKey], store: ApiRecords) -> None:
    """At start: refuse a name both places hold (BotError), and hand listed keys their rows.

    Questions from before key ids whose name no stored key had carry
    ``name:<name>`` (the migration could not know ``BOT_API_KEYS``); they were
    that listed key's, so it takes them, once: the claim rewrites them.
    """
    stored = {key.name for key in await store.keys()}
    for key in configured:
        if key.name in stored:
            raise BotError(BOTH_PLACES.format(name=key.name))
    for key in configured:
        await store.claim_unowned(key.name, key.key_id)


class KeyRing:
    """Who a presented key is: one of the configured keys, or one kept in the store."""

    def __init__(self, configured: Sequence[ApiKey], store: ApiRecords) -> None:
        self._configured = tuple(configured)
        self._store = store

    async def every_key(self) -> list[ApiKey]:
        """The configured keys, then the stored ones (whose routes bound what a caller may ask)."""
        return [*self._configured, *await self._store.keys()]

    async def holder(self, presented: str) -> ApiKey | None:
        digest = hash_key(presented)
        for key in self._configured:
            if hmac.compare_digest(key.key_hash, digest):
                return key
        return await self._store.key_by_hash(digest)
