"""Test helpers shared across test modules (fixtures live in conftest.py)."""

from __future__ import annotations

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
