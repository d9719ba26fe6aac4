"""Test helpers shared across test modules (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.human.capability import HumanInteractionCapability
from bot.kernel.turn import Agent
from bot.outcomes import Responder
from bot.providers.scripted import ScriptedProvider
from bot.runs import RunService
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
