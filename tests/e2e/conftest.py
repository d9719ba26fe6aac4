"""Fixtures for whole-process tests: real bot processes and an HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.adapters.temporal._temporal import client, deploying, temporal, workers
from tests.e2e._private_postgres import PrivateCluster, private_cluster
from tests.e2e._server import BotServer, StartBot
from tests.e2e._slack import checked_slack
from tests.e2e._teams import StartApp, TeamsBotApp, checked_connector
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import FakeSlack
from tests.stores._postgres import fresh_schema

# The Temporal fixtures (a dev server per module, its client, worker processes and the
# deploy driver), for the e2e tests of the Temporal adapter.
__all__ = ["client", "deploying", "temporal", "workers"]


@pytest.fixture
def cluster() -> Iterator[PrivateCluster]:
    """A started PostgreSQL server of the test's own, for tests that stop or restart it:
    the machine's is every other test's (and every parallel worker's)."""
    with private_cluster() as started:
        if started is None:
            pytest.skip("needs PostgreSQL's server binaries (initdb, pg_ctl)")
        yield started


@pytest.fixture
def start_bot(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[StartBot]:
    """``await start_bot(BOT_TTL_SECONDS="2")`` -> a ready server; all are killed at teardown.

    A Teams test (one run per SDK, ``teams_sdk``) starts its bots on that run's SDK.
    The log tail is printed at teardown, which pytest shows only for a failed test.
    """
    servers: list[BotServer] = []
    params = getattr(request.node, "callspec", None)
    sdk = params.params.get("teams_sdk") if params is not None else None
    teams = {"BOT_TEAMS_SDK": str(sdk)} if sdk else {}

    async def start(**env: str) -> BotServer:
        server = BotServer(tmp_path / f"bot{len(servers)}", **{**teams, **env})
        servers.append(server)
        return await server.start()

    yield start
    for server in servers:
        server.close()
        print(f"--- {server.log_path} (last lines) ---\n{server.log_tail()}")


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    timeout = aiohttp.ClientTimeout(total=20)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        yield session


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    """The loopback Slack Web API (``checked_slack``)."""
    async with checked_slack() as slack:
        yield slack


@pytest.fixture
async def connector(teams_sdk: str) -> AsyncIterator[FakeConnector]:
    """The loopback Bot Framework connector (``checked_connector``), once per Teams SDK."""
    async with checked_connector() as fake:
        yield fake


@pytest.fixture
async def start_app(tmp_path: Path, teams_sdk: str) -> AsyncIterator[StartApp]:
    """``await start_app(**settings)`` -> create_app served in process (``TeamsBotApp``), each
    in a folder of its own, once per Teams SDK; all are closed at teardown."""
    apps: list[TeamsBotApp] = []

    async def start(**overrides: Any) -> TeamsBotApp:
        app = await TeamsBotApp(tmp_path / f"bot{len(apps)}", **overrides).start()
        apps.append(app)
        return app

    yield start
    for app in apps:
        await app.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store_env(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, str]]:
    """What a bot process needs to run on each backend: its own SQLite file (``start_bot``'s
    default), or a fresh PostgreSQL schema with the signing keys a shared store requires."""
    if request.param == "sqlite":
        yield {}
        return
    async with fresh_schema() as url:
        yield {"DATABASE_URL": url, "BOT_SIGNING_KEYS": "k1:" + "s" * 48}
