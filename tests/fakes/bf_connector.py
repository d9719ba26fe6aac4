"""A Bot Framework connector on loopback that answers like the real one.

``POST /v3/conversations/{id}/activities`` creates an activity and returns
``{"id": ...}``; ``PUT /v3/conversations/{id}/activities/{activityId}``
replaces one. ``fail_next`` makes the next calls fail with a status (and a
Retry-After). Like Teams, it refuses an activity over ``max_bytes`` (about 28 KB)
with HTTP 413 and the error code ``MessageSizeTooBig``. It also serves OpenID
metadata and a JWKS, with the ``msteams`` endorsement, for a test RSA key, so
inbound authentication can be tested without the internet.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://api.botframework.test"
# Teams refuses a message of about 28 KB, the card and the envelope together.
MAX_MESSAGE_BYTES = 28_000


@dataclass
class Call:
    method: str
    conversation: str
    activity_id: str
    body: dict[str, Any]
    authorization: str
    status: int
    at: float = field(default_factory=time.monotonic)


@dataclass
class Failure:
    status: int
    retry_after: str | None


class FakeConnector:
    """Start with ``await FakeConnector().start()``; ``url`` is its serviceUrl."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        # Set on each call recorded: waits wake on it, never on a timer.
        self._recorded = asyncio.Event()
        self.activities: dict[tuple[str, str], dict[str, Any]] = {}
        self.failures: list[Failure] = []
        # Cards the bot answered an invoke with (not sent here): a test's driver notes them,
        # so they are checked with the cards the bot posted and edited (``sent_cards``).
        self.replied: list[dict[str, Any]] = []
        self.max_bytes = MAX_MESSAGE_BYTES
        self.key_fetches = 0
        # While set up by ``hold_posts``: posts wait here (their bodies listed) until released.
        self._gate: asyncio.Event | None = None
        self.held: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "test-key-1"
        app = web.Application()
        app.router.add_post("/v3/conversations/{conversation}/activities", self._post)
        app.router.add_put("/v3/conversations/{conversation}/activities/{activity}", self._put)
        app.router.add_get("/openid", self._openid)
        app.router.add_get("/keys", self._keys)
        self.server = TestServer(app, host="127.0.0.1")

    async def start(self) -> FakeConnector:
        await self.server.start_server()
        return self

    async def close(self) -> None:
        await self.server.close()

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    def fail_next(self, status: int, *, times: int = 1, retry_after: str | None = None) -> None:
        self.failures += [Failure(status, retry_after)] * times

    # -- what tests read ---------------------------------------------------------

    def posted(self) -> list[Call]:
        return [c for c in self.calls if c.method == "POST" and c.status < 300]

    def cards(self) -> list[Call]:
        return [c for c in self.posted() if c.body.get("attachments")]

    def texts(self) -> list[str]:
        return [str(c.body.get("text")) for c in self.posted() if c.body.get("text")]

    def updates(self, activity_id: str) -> list[Call]:
        return [
            c
            for c in self.calls
            if c.method == "PUT" and c.activity_id == activity_id and c.status < 300
        ]

    def sent_cards(self) -> dict[str, dict[str, Any]]:
        """Every card the bot posted, edited in or answered an invoke with, by where it went."""
        cards = {
            f"{c.method} {c.activity_id} #{i}": dict(attachment["content"])
            for i, c in enumerate(self.calls)
            if c.status < 300
            for attachment in c.body.get("attachments", [])
        }
        cards.update({f"invoke reply #{i}": card for i, card in enumerate(self.replied)})
        return cards

    def _note(self, call: Call) -> None:
        self.calls.append(call)
        self._recorded.set()

    async def wait_for(self, check: Callable[[], Any], *, what: str, seconds: float = 15.0) -> Any:
        """Readiness wait: the first truthy ``check()`` (of the calls) within ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            self._recorded.clear()
            found = check()
            if found:
                return found
            try:
                left = max(deadline - time.monotonic(), 0)
                await asyncio.wait_for(self._recorded.wait(), left)
            except TimeoutError:
                raise AssertionError(
                    f"no {what} within {seconds:.0f} s; calls: {self.calls}"
                ) from None

    # -- tokens for inbound authentication ---------------------------------------

    def token(self, *, audience: str, service_url: str, **overrides: Any) -> str:
        """A channel token as the Bot Framework signs it (RS256, ``kid`` header)."""
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": audience,
            "serviceurl": service_url,
            "nbf": now - 10,
            "iat": now - 10,
            "exp": now + 600,
            **overrides,
        }
        kid = claims.pop("kid", self.kid)
        key = claims.pop("key", self.key)
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})

    # -- handlers ----------------------------------------------------------------

    def hold_posts(self) -> asyncio.Event:
        """Posts from now on are listed in ``held`` at once but answered only once the event
        is set, so a test knows the bot is waiting there (to kill it at a known point)."""
        self._gate = asyncio.Event()
        return self._gate

    async def _post(self, request: web.Request) -> web.Response:
        if self._gate is not None:
            self.held.append(await request.json())
            self._recorded.set()  # a wait on ``held`` wakes too
            await self._gate.wait()
        return await self._record(request, "POST", str(next(self._ids)))

    async def _put(self, request: web.Request) -> web.Response:
        return await self._record(request, "PUT", request.match_info["activity"])

    async def _record(self, request: web.Request, method: str, activity_id: str) -> web.Response:
        raw = await request.read()
        body = await request.json()
        conversation = request.match_info["conversation"]
        auth = request.headers.get("Authorization", "")
        if len(raw) > self.max_bytes:
            self._note(Call(method, conversation, activity_id, body, auth, 413))
            error = {"error": {"code": "MessageSizeTooBig", "message": "Message size too large."}}
            return web.json_response(error, status=413)
        if self.failures:
            failure = self.failures.pop(0)
            self._note(Call(method, conversation, activity_id, body, auth, failure.status))
            headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
            error = {"error": {"code": "Throttled" if failure.status == 429 else "Failure"}}
            return web.json_response(error, status=failure.status, headers=headers)
        if method == "PUT" and (conversation, activity_id) not in self.activities:
            self._note(Call(method, conversation, activity_id, body, auth, 404))
            return web.json_response({"error": {"code": "ActivityNotFound"}}, status=404)
        self.activities[(conversation, activity_id)] = body
        self._note(Call(method, conversation, activity_id, body, auth, 200))
        return web.json_response({"id": activity_id}, status=200 if method == "PUT" else 201)

    async def _openid(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": ISSUER,
                "jwks_uri": f"{self.url}/keys",
                "id_token_signing_alg_values_supported": ["RS256"],
            }
        )

    async def _keys(self, request: web.Request) -> web.Response:
        self.key_fetches += 1
        numbers = self.key.public_key().public_numbers()
        jwk = {
            "kty": "RSA",
            "use": "sig",
            "kid": self.kid,
            "n": _b64(numbers.n),
            "e": _b64(numbers.e),
            "endorsements": ["msteams"],
        }
        return web.json_response({"keys": [jwk]})


def _b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
