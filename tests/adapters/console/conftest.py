"""A real console on a loopback port, over a real RunService and SQLite stores."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from adapters.console import ConsoleLimits, ConsoleSurface, mount_console
from bot.admin import ADMIN_SERVICE, AdminService
from bot.api import ApiSettings, serve_api
from bot.app.agent_spec import AgentSpec
from bot.app.compose import build_agent
from bot.contract.models import Policy
from bot.demo import Fleet, demo_script
from bot.human.factory import ask_user_registration
from bot.human.tokens import TokenSigner
from bot.interactions.approval import approval_registration, approval_tool
from bot.providers.scripted import ScriptedProvider
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.running.runs import RUN_SERVICE, RunService
from bot.serving import ALLOWED_HOSTS, SIGN_IN, AllowedHosts, SignIn, http_guards
from bot.stores.ports import Stores
from bot.testing import FixedClock
from bot.webhooks import WebhookSettings
from tests.adapters.console.console_support import Console, ConsoleFactory
from tests.e2e._server import free_port


@pytest.fixture
async def make_console(
    sqlite_stores: Stores, clock: FixedClock, signer: TokenSigner
) -> AsyncIterator[ConsoleFactory]:
    opened: list[Console] = []
    stops: list[Callable[[], Awaitable[None]]] = []

    async def make(
        *,
        users: dict[str, str] | None = None,
        heartbeat_seconds: float = 15.0,
        limits: ConsoleLimits | None = None,
        policy: RequesterOrApprovers | None = None,
        operator: str = "Ana",
        spec: AgentSpec | None = None,
        policies: dict[str, Policy] | None = None,
        admin: bool = False,
        admins: Sequence[str] = (),
        api: bool = False,
    ) -> Console:
        """The demo agent, or ``spec``'s tools, interactions and provider; ``admin``
        mounts the admin commands as create_app does, ``admins`` the ones allowed them;
        ``api`` serves the agents API (``/v1``), for questions an agent asks."""
        agent, capability = build_agent(
            provider=spec.provider if spec and spec.provider else ScriptedProvider(demo_script),
            stores=sqlite_stores,
            signer=signer,
            clock=clock,
            tools=spec.tools if spec else [*Fleet().tools(), approval_tool()],
            registrations=spec.registrations
            if spec
            else [ask_user_registration(), approval_registration()],
            policies=policies,
        )
        policy = policy or RequesterOrApprovers()
        service = RunService(
            agent=agent, capability=capability, stores=sqlite_stores, clock=clock, policy=policy
        )
        surface = ConsoleSurface(heartbeat_seconds=heartbeat_seconds)
        service.add_surface(surface)
        # The same guards and keys create_app installs, on a port known up front.
        port = free_port()
        allowed = AllowedHosts.loopback(port)
        app = web.Application(middlewares=http_guards(allowed=allowed, body_timeout=5.0))
        app[ALLOWED_HOSTS] = allowed
        app[SIGN_IN] = SignIn(users, operator=operator, clock=clock)
        mount_console(app, surface, policy=policy, limits=limits, clock=clock)
        app[RUN_SERVICE] = service
        if admin or admins:
            app[ADMIN_SERVICE] = AdminService(
                stores=sqlite_stores,
                admins=list(admins),
                max_ttl_seconds=2 * 24 * 3600.0,
                runs=service,
                policy=policy,
                clock=clock,
            )
        if api:
            stops.append(serve_api(app, ApiSettings(), WebhookSettings(), service=service))
        client = TestClient(TestServer(app, host="127.0.0.1", port=port))
        await client.start_server()
        console = Console(client, service, surface, clock)
        opened.append(console)
        return console

    yield make
    for stop in stops:
        await stop()
    for console in opened:
        await console.client.close()
        await console.service.drain(5.0)


@pytest.fixture
async def console(make_console: ConsoleFactory) -> Console:
    return await make_console()
