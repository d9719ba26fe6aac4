"""Who is asking: a person signed in with their own credentials, or the local operator.

Passwords are kept only as scrypt hashes. Verifying one costs tens of
milliseconds on purpose, and HTTP Basic sends the credentials with every
request, so a verified header is remembered by its HMAC (keyed per
process) for a while instead of being hashed again each time. The hashing
runs in a worker thread, a few at a time, so a burst of wrong passwords
queues up instead of stalling the event loop for everyone else.

A guesser is slowed per client address: after a few failed attempts in a
sliding minute, that address's checks are refused (``Throttled``) before
any hashing, whatever the password; a header already verified is still
recognised, so people signed in from the same address are not locked out.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

from bot.serving._rates import RateLimits, Throttled

_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
_REMEMBERED = 256
_REMEMBER_SECONDS = 300.0
_CONCURRENT_CHECKS = 2
FAILURES_PER_MINUTE = 5


class SignIn:
    """Maps a request's ``Authorization`` header to a person's name, or None."""

    def __init__(
        self,
        users: Mapping[str, str] | None,
        *,
        operator: str = "operator",
        clock: Callable[[], float] = time.monotonic,
        failures_per_minute: int = FAILURES_PER_MINUTE,
    ) -> None:
        # With no users, everyone who can reach the (loopback) port is the operator.
        self.operator = operator
        self._hashes = {name: _hash(password) for name, password in (users or {}).items()}
        self._open = users is None
        self._key = secrets.token_bytes(32)
        self._seen: OrderedDict[bytes, tuple[str, float]] = OrderedDict()
        self._clock = clock
        self._checks = asyncio.Semaphore(_CONCURRENT_CHECKS)
        self._failures = RateLimits("sign-in-failures", clock=clock)
        self._failures_per_minute = failures_per_minute

    @property
    def required(self) -> bool:
        """True when people must sign in (some credentials are configured)."""
        return not self._open

    async def identify(self, authorization: str, *, client: str = "") -> str | None:
        """The signed-in name, the operator's when sign-in is off, None when refused.

        ``client`` is the peer's address; ``Throttled`` when it has failed too often.
        """
        if self._open:
            return self.operator
        if not authorization:
            return None
        fingerprint = hmac.digest(self._key, authorization.encode(), "sha256")
        now = self._clock()
        remembered = self._seen.get(fingerprint)
        if remembered is not None and remembered[1] > now:
            return remembered[0]
        async with self._checks:
            # Asked once this check's turn comes, so a burst queued behind the
            # first failures is refused rather than hashed.
            wait = self._failures.retry_after(client, per_minute=self._failures_per_minute)
            if wait:
                raise Throttled(wait)
            name = await asyncio.to_thread(self._verify, authorization)
            if name is None:
                self._failures.hit(client, per_minute=self._failures_per_minute)
        if name is not None:
            self._seen[fingerprint] = (name, now + _REMEMBER_SECONDS)
            self._seen.move_to_end(fingerprint)
            while len(self._seen) > _REMEMBERED:
                self._seen.popitem(last=False)
        return name

    def _verify(self, authorization: str) -> str | None:
        credentials = _basic(authorization)
        if credentials is None:
            return None
        name, password = credentials
        stored = self._hashes.get(name)
        # An unknown name is hashed too, so timing does not tell names apart.
        salt, digest = stored or (b"\0" * 16, b"")
        given = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
        return name if stored is not None and hmac.compare_digest(given, digest) else None


def _hash(password: str) -> tuple[bytes, bytes]:
    salt = secrets.token_bytes(16)
    return salt, hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)


def _basic(header: str) -> tuple[str, str] | None:
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are both ValueErrors
        return None
    name, colon, password = decoded.partition(":")
    return (name, password) if colon and name else None
