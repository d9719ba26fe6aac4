"""Shared fixtures: a fixed clock, a signer, real stores, a service factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.app.compose import build_agent
from bot.contract.models import Policy
from bot.human.capability import InteractionRegistration
from bot.human.tokens import TokenSigner, random_signing_key
from bot.human.ttl import TTLPolicy
from bot.kernel.tools import Tool
from bot.providers.scripted import Script, ScriptedProvider
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.delivery import Timers
from bot.service.running.foreground import Foreground
from bot.service.running.runs import RunService
from bot.stores import open_stores
from bot.stores.ports import Stores
from bot.stores.postgres import PostgresStores
from bot.testing import FixedClock, RecordingSurface
from tests.browser import browser as browser  # the browser tests' one fixture
from tests.stores._postgres import fresh_schema
from tests.support import TEAMS_SDKS, Harness, HarnessFactory


# Every test that reaches the Teams endpoint runs once on each SDK (TEAMS_SDKS), through
# this one fixture: the loopback connector's and the in-process app's fixtures ask for it,
# and ``start_bot`` passes it to the bot process.
@pytest.fixture(params=TEAMS_SDKS)
def teams_sdk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The SDK this run of the test serves Teams on (BOT_TEAMS_SDK, for apps in process)."""
    sdk = str(request.param)
    monkeypatch.setenv("BOT_TEAMS_SDK", sdk)
    return sdk


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def signer() -> TokenSigner:
    return TokenSigner([random_signing_key("k1")])


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "bot.sqlite3"


@pytest.fixture
async def sqlite_stores(db_path: Path) -> AsyncIterator[Stores]:
    stores = await open_stores(f"sqlite:///{db_path}")
    yield stores
    await stores.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, db_path: Path) -> AsyncIterator[Stores]:
    """Every backend, each fresh: a SQLite file, a PostgreSQL schema of its own."""
    if request.param == "postgres":
        async with fresh_schema() as url:
            opened = await open_stores(url)
            try:
                yield opened
            finally:
                await opened.close()
        return
    opened = await open_stores(f"sqlite:///{db_path}")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """A PostgreSQL schema of this test's own (other tests share the database), dropped after."""
    async with fresh_schema() as url:
        yield url


@pytest.fixture
async def replicas(pg_url: str) -> AsyncIterator[tuple[PostgresStores, PostgresStores]]:
    """Two stores on one schema, as two replicas of the bridge open it."""
    a = await PostgresStores.open(pg_url)
    b = await PostgresStores.open(pg_url)
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


@pytest.fixture
def harness(clock: FixedClock, signer: TokenSigner) -> HarnessFactory:
    def make(
        stores: Stores,
        script: Sequence[Any] | Script,
        *,
        tools: Sequence[Tool] = (),
        registrations: Sequence[InteractionRegistration] | None = None,
        ttl: TTLPolicy | None = None,
        policy: RequesterOrApprovers | None = None,
        foreground: Foreground | None = None,
        policies: dict[str, Policy] | None = None,
        timers: Timers | None = None,
    ) -> Harness:
        provider = ScriptedProvider(script)
        agent, capability = build_agent(
            provider=provider,
            stores=stores,
            signer=signer,
            clock=clock,
            tools=tools,
            registrations=registrations,
            ttl=ttl,
            policies=policies,
        )
        surface = RecordingSurface()
        service = RunService(
            agent=agent,
            capability=capability,
            stores=stores,
            surfaces={"test": surface},
            clock=clock,
            policy=policy,
            foreground=foreground,
            timers=timers,
        )
        return Harness(service, agent, capability, surface, provider, stores)

    return make


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """``fuzz <door>: N examples`` for each door a property test sent inputs to."""
    from tests.fuzz_counts import EXAMPLES

    for door, examples in sorted(EXAMPLES.items()):
        terminalreporter.write_line(f"fuzz {door}: {examples} examples")
