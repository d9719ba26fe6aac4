"""The composition root: settings -> stores, signer, agent, surfaces -> one aiohttp app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from aiohttp import web

from adapters.console import ConsoleSurface, mount_console
from adapters.email import EmailSurface
from adapters.slack import SlackBridge
from adapters.teams import TeamsSurface, mount_teams
from bot.admin import ADMIN_SERVICE, AdminService
from bot.api import mount_api, mount_link_page, serve_api, settle_keys
from bot.api.links import ANSWER_LINKS, AnswerLinks
from bot.app.agent_spec import AgentSpec, load_factory
from bot.app.agents_only import agents_only
from bot.app.audit import audit_keys, checkpoint, checkpoint_forever
from bot.app.compose import build_agent
from bot.app.legal import mount_legal
from bot.app.retention import purge_forever
from bot.app.settings import Settings
from bot.errors import BotError, install_extra
from bot.human.signing import keys_from, signer_from
from bot.interactions.approval import APPROVAL
from bot.providers.base import Provider
from bot.service.answering.policy import RequesterOrApprovers, check_policy_names
from bot.service.running.metrics import Metrics
from bot.service.running.runs import RUN_SERVICE, RunService
from bot.serving import (
    ALLOWED_HOSTS,
    SIGN_IN,
    allowed_hosts_for,
    http_guards,
    quiet_malformed_requests,
    refuse_unless_signed_in,
    sign_in_for,
)
from bot.stores.ports import Change, changes_of

log = logging.getLogger(__name__)

# The settings the app was built from, for handlers that read them per request.
SETTINGS = web.AppKey("settings", Settings)

MAX_BODY_BYTES = 64 * 1024
INTERNAL_ERROR = "The bot hit an internal error; nothing was changed. Try again, or ask an admin."


def create_app(settings: Settings) -> web.Application:
    """Build the app; stores and the run service open when it starts.

    Refuses (SigningConfigError) a shared store without explicit signing keys
    here, before anything is opened: every replica must verify every other's
    tokens.
    """
    signer_from(settings.signing, shared_store=settings.store.shared)
    # The first line the app logs: started from another folder, relative defaults would
    # mean a new, empty store and a new signing key, and this line shows which were used.
    log.info("using the %s", settings.whereabouts())
    quiet_malformed_requests()
    serving = settings.serving
    allowed = allowed_hosts_for(serving)
    guards = http_guards(allowed=allowed, body_timeout=serving.body_timeout_seconds)
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[*guards, _no_tracebacks])
    app[SETTINGS] = settings
    app[ALLOWED_HOSTS] = allowed
    # Built once here; a surface that hands links out (email) is given this one object.
    app[ANSWER_LINKS] = answer_links(settings)
    app[SIGN_IN] = sign_in_for(
        settings.console.accounts(),
        local=serving.is_local,
        failures_per_minute=serving.sign_in_failures_per_minute,
    )
    slack = (
        SlackBridge(settings.slack, admin_groups=settings.admin.groups)
        if settings.slack.mode
        else None
    )
    # One policy for every surface and the run service: who may answer is decided once.
    policy = settings.policy.build(
        admins=settings.admin.ids, directory=slack.directory if slack is not None else None
    )
    console = ConsoleSurface() if settings.console.enabled else None
    if console is not None:
        mount_console(app, console, policy=policy, limits=settings.console.limits)
    teams = mount_teams(app, settings.teams, local=serving.is_local)
    if slack is not None:
        slack.mount(app)
    email = email_surface(settings, app[ANSWER_LINKS])
    mount_api(app, creates_per_minute=settings.api.creates_per_minute)
    mount_link_page(app, settings.links)
    if settings.mcp.http:
        _mount_mcp(app, settings)
    app.router.add_get("/healthz", _ready)
    app.router.add_get("/readyz", _ready)
    app.router.add_get("/livez", _live)
    app.router.add_get("/metrics", _metrics)
    mount_legal(app)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        async with _running_service(settings, policy, console, teams, slack, email) as service:
            app[RUN_SERVICE] = service
            app[ADMIN_SERVICE] = admin_service(settings, service, policy)
            stop_api = serve_api(
                app,
                settings.api,
                settings.webhooks,
                service=service,
                approval_allow=settings.policy.allowed(APPROVAL),
                link_signin=settings.links.signin,
            )
            try:
                yield
            finally:
                await stop_api()

    app.cleanup_ctx.append(lifecycle)
    if settings.mcp_gateway.file is not None:
        # After the lifecycle: the gateway's start reads the API keys the lifecycle serves.
        _mount_mcp_gateway(app, settings)
    return app


def answer_links(settings: Settings) -> AnswerLinks:
    """Links under ``BOT_PUBLIC_URL`` (loopback without one), signed with the resume keys."""
    serving = settings.serving
    url = serving.public_url or f"http://127.0.0.1:{serving.port}"
    return AnswerLinks(
        keys_from(settings.signing, shared_store=settings.store.shared), public_url=url
    )


def email_surface(settings: Settings, links: AnswerLinks) -> EmailSurface | None:
    """Email, when ``BOT_SMTP_URL`` is set: its links open the question page (``links``)."""
    email = settings.email
    server = email.server()
    if server is None or email.sender is None:
        return None
    return EmailSurface(server, sender=email.sender, links=links, timeout=email.timeout_seconds)


def _mount_mcp(app: web.Application, settings: Settings) -> None:
    """``/mcp``, imported only when it is on: the server runs without the ``mcp`` extra."""
    with _needs_mcp("BOT_MCP_HTTP is on", unset="BOT_MCP_HTTP"):
        from adapters.mcp import mount_mcp
    mount_mcp(app, settings.mcp, bridge_url=_own_url(settings))


def _mount_mcp_gateway(app: web.Application, settings: Settings) -> None:
    """``/mcp/gateway``, imported only when ``BOT_MCP_GATEWAY`` names a file."""
    with _needs_mcp("BOT_MCP_GATEWAY is set", unset="BOT_MCP_GATEWAY"):
        from adapters.mcp_gateway import mount_gateway
    data_dir = settings.signing.data_dir
    mount_gateway(
        app, settings.mcp, settings.mcp_gateway, data_dir=data_dir, bridge_url=_own_url(settings)
    )


@contextlib.contextmanager
def _needs_mcp(setting: str, *, unset: str) -> Iterator[None]:
    try:
        yield
    except ModuleNotFoundError as missing:
        raise BotError(
            f"{setting} but the package {missing.name!r} is missing; install the "
            f"mcp extra ({install_extra('mcp')}) or unset {unset}"
        ) from None


def _own_url(settings: Settings) -> str:
    """How this bridge's MCP doors reach its own ``/v1``."""
    serving = settings.serving
    return settings.mcp.bridge_url or serving.public_url or f"http://127.0.0.1:{serving.port}"


@contextlib.asynccontextmanager
async def _running_service(
    settings: Settings,
    policy: RequesterOrApprovers,
    console: ConsoleSurface | None,
    teams: TeamsSurface | None = None,
    slack: SlackBridge | None = None,
    email: EmailSurface | None = None,
) -> AsyncIterator[RunService]:
    stores = await settings.store.open()
    try:
        # Before anything runs or "serving on" is said: a name in both places refuses to start.
        await settle_keys(settings.api.configured_keys(), stores.api)
    except BaseException:
        await stores.close()
        raise
    # Changes other replicas make (a question answered through them) redraw our pages too.
    unsubscribe = changes_of(stores).subscribe(_redraw_on(console)) if console is not None else None
    provider: Provider | None = None
    sweeper: asyncio.Task[None] | None = None
    checkpointer: asyncio.Task[None] | None = None
    purger: asyncio.Task[None] | None = None
    service: RunService | None = None
    channels = contextlib.AsyncExitStack()
    try:
        spec = agent_spec(settings)
        check_policy_names(
            settings.policy.question_policies(), [r.name for r in spec.registrations]
        )
        provider = spec.provider or settings.provider.build()
        agent, capability = build_agent(
            provider=provider,
            stores=stores,
            signer=signer_from(settings.signing, shared_store=settings.store.shared),
            clock=time.time,
            tools=spec.tools,
            registrations=spec.registrations,
            ttl=settings.ttl.build(),
            system_prompt=spec.system_prompt,
            max_rounds=spec.max_rounds,
            policies=settings.policy.question_policies(),
        )
        service = RunService(
            agent=agent,
            capability=capability,
            stores=stores,
            policy=policy,
            metrics=Metrics(),
            lease_seconds=settings.run.lease_seconds,
            chats=settings.run.chats,
        )
        for surface in (console, teams, email):
            if surface is not None:
                service.add_surface(surface)
        if slack is not None:
            await channels.enter_async_context(slack.serving(service))
        recovered = await service.recover()
        if recovered:
            log.info("resuming %d runs answered before the last stop", recovered)
        log.info(
            "serving on http://%s:%d/ (store %s, console %s, agent %s)",
            settings.serving.host,
            settings.serving.port,
            settings.store.backend,
            "on" if console is not None else "off",
            spec.name,
        )
        run = settings.run
        sweeper = asyncio.get_running_loop().create_task(
            # Often enough that a lapsed lease is taken over well within a second lease.
            _sweep_forever(service, min(run.sweep_seconds, run.lease_seconds / 2)),
            name="expiry sweeper",
        )
        audit_key = audit_keys(settings.signing, shared_store=settings.store.shared)[0]
        days = settings.store.retention_days
        if days is not None:
            purger = asyncio.get_running_loop().create_task(
                purge_forever(stores.retention, days), name="retention sweep"
            )
        checkpointer = asyncio.get_running_loop().create_task(
            checkpoint_forever(stores.audit_chain, audit_key, settings.audit.checkpoint_minutes),
            name="audit checkpoints",
        )
        yield service
    finally:
        log.info("shutting down: finishing resumes in flight")
        for task in (sweeper, checkpointer, purger):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if service is not None:
            await service.drain(settings.run.shutdown_grace_seconds)
        if checkpointer is not None:
            # After the drain, so the last events of the runs it finished are signed too.
            await checkpoint(stores.audit_chain, audit_key)
        await channels.aclose()  # after the drain: resumes in flight still post to Slack
        close = getattr(provider, "close", None)
        if close is not None:
            await close()
        if unsubscribe is not None:
            unsubscribe()
        await stores.close()
        log.info("stopped cleanly")


def admin_service(
    settings: Settings, service: RunService, policy: RequesterOrApprovers
) -> AdminService:
    """Admin commands in the serving process: a cancel resumes the run at once."""
    return AdminService(
        stores=service.stores,
        admins=settings.admin.ids,
        max_ttl_seconds=settings.ttl.max_seconds,
        runs=service,
        policy=policy,
        clock=service.clock,
    )


def _redraw_on(console: ConsoleSurface) -> Callable[[Change], None]:
    def redraw(change: Change) -> None:
        if change.surface == console.name:
            console.notify(change.key)

    return redraw


# The embedded demo is loaded as a deployment's own agent is (``BOT_AGENT``):
# it is the default factory, not a part of the composition root.
DEMO_AGENT = "bot.demo:demo_agent"


def agent_spec(settings: Settings) -> AgentSpec:
    if not settings.run.chats:
        return agents_only(settings)
    return load_factory(settings.run.agent or DEMO_AGENT)(settings)


async def _sweep_forever(service: RunService, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        try:
            expired = await service.sweep()
            # Also delivers what is due, including what a dead process owed.
            recovered = await service.recover()
        except Exception:
            log.exception("expiry sweep failed; retrying next interval")
            continue
        if expired or recovered:
            log.info("expired %d questions, recovered %d runs", expired, recovered)


async def _live(request: web.Request) -> web.Response:
    """Liveness: this answer is the process and its event loop answering; no store is read,
    so a database outage never has a pod restarted (it comes back by itself)."""
    return web.json_response({"ok": True})


async def _ready(request: web.Request) -> web.Response:
    """Readiness (``/readyz``, and ``/healthz`` as before): started, and the store answers.

    The surfaces' credentials are checked once, at start (a refused token stops the
    start) and by ``check``: asked on every probe, they would spend the platforms' rate
    limits, and a Slack outage would take /v1 and the console out of service too.
    """
    service = request.app.get(RUN_SERVICE)
    if service is None:
        return web.json_response({"ok": False, "error": "starting"}, status=503)
    try:
        await service.stores.ping()
    except Exception as error:  # noqa: BLE001  any failure is "not ready", said in one line
        # A warning, not a traceback: during an outage every probe lands here.
        log.warning("readiness: the store is unreachable (%s)", type(error).__name__)
        return web.json_response({"ok": False, "error": "store unreachable"}, status=503)
    return web.json_response({"ok": True})


async def _metrics(request: web.Request) -> web.Response:
    # Beyond loopback the figures (run counts, refusal reasons) need a sign-in too.
    if not request.app[SETTINGS].serving.is_local:
        refused = await refuse_unless_signed_in(request)
        if refused is not None:
            return refused
    service = request.app[RUN_SERVICE]
    # Store-wide counts, the same figures `admin stats` prints (identical on every replica).
    service.metrics.questions.stats = await service.stores.admin.stats()
    return web.Response(body=service.metrics.render(), content_type="text/plain", charset="utf-8")


@web.middleware
async def _no_tracebacks(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Any unexpected error is one sentence to the caller and a logged trace for us."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("unhandled error", extra={"path": request.path})
        return web.json_response({"ok": False, "error": INTERNAL_ERROR}, status=500)
