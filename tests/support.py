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
from bot.questions.capability_ports import LifecyclePorts
from bot.questions.lifecycle import Lifecycle
from bot.questions.records import Closing, PauseRecord, PauseStatus, RunStatus
from bot.questions.write import Owed, Write
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


class Steps:
    """The lifecycle's steps over one store, in the shapes the store tests call them."""

    def __init__(
        self, stores: Stores, *, owner: str = "", lifecycle: Lifecycle | None = None
    ) -> None:
        self.stores = stores
        self.lifecycle = lifecycle or Lifecycle(stores.unit)
        self.owed: list[Owed] = []
        if owner:
            self.lifecycle.bind(owner=owner, claim_seconds=30.0, sink=self.owed.extend)

    async def issue(self, record: PauseRecord) -> None:
        """Ask ``record``; a row already closed is stored as it is (no post, no pause)."""
        if record.status is PauseStatus.OUTSTANDING:
            await self.lifecycle.ask(record)
        else:
            await self.stores.unit.apply(Write(record.run_id, record.issued_at, question=record))

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        return await self.lifecycle.close(interrupt_id, closing) is not None

    async def finish(
        self, run_id: str, status: RunStatus, *, at: float, text: str, failed: bool = False
    ) -> bool:
        return await self.lifecycle.finish(run_id, status, at=at, text=text, failed=failed)

    async def extend(
        self, interrupt_id: str, *, expires_at: float, at: float, actor: str
    ) -> PauseRecord | None:
        record = await self.stores.ledger.get(interrupt_id)
        if record is None or record.status is not PauseStatus.OUTSTANDING:
            return None
        written = await self.lifecycle.extend(record, expires_at=expires_at, at=at, actor=actor)
        return None if written is None else written.question

    async def repost(self, interrupt_id: str, *, at: float, actor: str) -> PauseRecord | None:
        record = await self.stores.ledger.get(interrupt_id)
        if record is None or record.status is not PauseStatus.OUTSTANDING:
            return None
        written = await self.lifecycle.repost(record, at=at, actor=actor)
        return None if written is None else written.question


def steps(stores: Stores, *, owner: str = "", lifecycle: Lifecycle | None = None) -> Steps:
    """``lifecycle``: a service's own (``RunService.questions``), bound to its deliverer."""
    return Steps(stores, owner=owner, lifecycle=lifecycle)


def bridge_ports(stores: Stores) -> LifecyclePorts:
    """The capability's ports as the bridge wires them, over ``stores``."""
    return LifecyclePorts(Lifecycle(stores.unit), stores.checkpoints)
