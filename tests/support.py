"""Test helpers shared across test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt

from bot.human.capability import HumanInteractionCapability
from bot.human.tokens import MintedPause, PauseClaims, TokenSigner, random_signing_key
from bot.kernel.turn import Agent
from bot.outcomes import Responder
from bot.providers.scripted import ScriptedProvider
from bot.service.runs import RunService
from bot.stores.ports import Stores
from bot.surfaces import Conversation
from bot.testing import RecordingSurface

REQUESTER = Responder("test:alice", "Alice")
WHERE = Conversation(surface="test", scope="T1", key="C1", thread="th1")


@dataclass
class Harness:
    service: RunService
    agent: Agent
    capability: HumanInteractionCapability
    surface: RecordingSurface
    provider: ScriptedProvider
    stores: Stores

    async def start(self, text: str = "go", *, where: Conversation = WHERE) -> str:
        run = await self.service.start(where, REQUESTER, text)
        await self.service.wait_idle()
        assert run is not None
        return run.run_id

    async def answer(
        self, answer: dict[str, Any], *, who: Responder = REQUESTER, token: str | None = None
    ) -> Any:
        outcome = await self.service.redeem(
            token or self.surface.last_token, answer, responder=who, scope=WHERE.scope
        )
        await self.service.wait_idle()
        return outcome


HarnessFactory = Callable[..., Harness]


def forgeries(good: str) -> dict[str, str]:
    """Every way to get a token wrong, derived from a real one (kid ``k1``)."""
    header, _payload, signature = good.split(".")
    claims = jwt.decode(good, options={"verify_signature": False})
    stranger = TokenSigner([random_signing_key("k1")])
    fields = {k: claims[k] for k in PauseClaims.__slots__}
    return {
        "forged with another secret": stranger.encode(MintedPause(PauseClaims(**fields))),
        "tampered payload": ".".join([header, _b64({**claims, "scope": "T-other"}), signature]),
        "alg none": jwt.encode(claims, None, algorithm="none", headers={"kid": "k1"}),
        "unknown kid": jwt.encode(claims, "x" * 48, algorithm="HS256", headers={"kid": "k9"}),
        "truncated": good[: len(good) // 2],
        "signature dropped": good.rsplit(".", 1)[0] + ".",
        "header not JSON": ".".join([_raw_b64(b"{kid"), _payload, signature]),
        "header a list": ".".join([_raw_b64(b'["k1"]'), _payload, signature]),
        "header not UTF-8": ".".join([_raw_b64(b"\xff\xfe"), _payload, signature]),
        "10 kB of garbage": "A" * 10_240,
    }


def _b64(data: dict[str, object]) -> str:
    return _raw_b64(json.dumps(data).encode())


def _raw_b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# How long a test waits for an event before failing instead of hanging.
HANG_GUARD_SECONDS = 10.0


class FakeTimer:
    """One timer armed on ``FakeTimers``: fires at ``when`` unless cancelled first."""

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self._when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True


class FakeTimers:
    """An event loop's clock and timers, on a time that moves only when told to.

    Stands in for the loop's ``time``, ``call_at`` and ``call_later`` (the
    ``timers=`` seam of ``Foreground`` and ``LeaseKeeper``); called, it is a
    clock too. ``advance`` fires the timers due on the way, in order, each at
    its own time, and gives the loop a turn after each so the work a timer
    woke runs before the next one fires, as on a real loop.
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self._armed: list[FakeTimer] = []
        self._changed = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> FakeTimer:
        timer = FakeTimer(when, callback, args)
        self._armed.append(timer)
        self._changed.set()
        return timer

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> FakeTimer:
        return self.call_at(self.now + delay, callback, *args)

    @property
    def pending(self) -> list[FakeTimer]:
        """The timers armed and neither fired nor cancelled, soonest first."""
        return sorted((t for t in self._armed if not t.cancelled), key=FakeTimer.when)

    async def armed(self) -> None:
        """Return once some timer is pending (the work that arms one has run).

        Real time bounds the wait only so that a timer never armed fails the
        test instead of hanging it.
        """
        async with asyncio.timeout(HANG_GUARD_SECONDS):
            while not self.pending:
                self._changed.clear()
                await self._changed.wait()

    async def advance(self, seconds: float) -> None:
        end = self.now + seconds
        fired = 0
        while (due := self.pending) and due[0].when() <= end:
            timer = due[0]
            fired += 1
            assert fired < 10_000, f"timers keep firing at {self.now}: one re-arms for its own time"
            self._armed.remove(timer)
            self.now = max(self.now, timer.when())
            timer.callback(*timer.args)
            await asyncio.sleep(0)  # a turn of the loop for what the timer woke or spawned
        self.now = end
