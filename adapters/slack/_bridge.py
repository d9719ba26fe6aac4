"""``SlackBridge``: the bolt app on our aiohttp server, or over Socket Mode.

HTTP requests are verified here, once, before bolt sees them (bolt's own
check is switched off so the HMAC is not computed twice): a bad signature
or stale timestamp gets 401, a body that does not parse gets 400, and
neither ever shows a traceback. An interaction may be as large as a modal's
submission can be (``_submissions``), read before its signature can be
checked; every other request keeps the app's body limit. With ``SLACK_APP_TOKEN`` set the same bolt
app also takes events over Socket Mode, so a laptop needs no public URL.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._edge import (
    FORM,
    KEEP_SECONDS,
    InProcessSignatures,
    NotAPayload,
    SeenSignatures,
    may_be_signed,
    parse,
    verify,
)
from adapters.slack._installations import EncryptedInstallationStore, oauth_settings
from adapters.slack._listeners import Listeners, is_click
from adapters.slack._submissions import INTERACTION_BYTES
from adapters.slack._surface import SlackDirectory, SlackSurface
from adapters.slack.settings import SlackSettings
from bot.admin import ADMIN_SERVICE, AdminService
from bot.errors import BotError
from bot.service.running.runs import RunService
from bot.serving import allow_larger_bodies
from bot.stores.errors import is_outage
from bot.stores.ports import StoredResponse

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
BAD_SIGNATURE = "This request is not signed by Slack with this app's signing secret."
BAD_BODY = "This request's body is not a Slack payload."


class SlackBridge:
    """Everything Slack: the bolt app, its routes, the surface and the directory."""

    def __init__(self, settings: SlackSettings, *, admin_groups: Sequence[str] = ()) -> None:
        self.settings = settings
        self.api_url = settings.api_url
        self._service: RunService | None = None
        self._clients: dict[str, AsyncWebClient] = {}
        # One keep-alive session for every Web API call: without it slack_sdk
        # opens a new session, and a new connection, per call.
        self._session: aiohttp.ClientSession | None = None
        secret = settings.signing_secret
        self._secret = secret.get_secret_value().encode() if secret else None
        self.seen: SeenSignatures = InProcessSignatures()
        self.bolt = self._bolt_app()
        self.surface = SlackSurface(client_for=self.client_for)
        self.directory = SlackDirectory(self.surface)
        self._app: web.Application | None = None
        self.listeners = Listeners(
            self.surface,
            admin=self._admin_service,
            admin_groups=admin_groups,
            directory=self.directory,
        )
        self.listeners.register(self.bolt)
        self._socket: AsyncSocketModeHandler | None = None

    def mount(self, app: web.Application) -> None:
        self._app = app
        app.router.add_post(EVENTS_PATH, self._events)
        # A modal's submission carries the whole view back: more than the app's limit, so
        # an interaction (form-encoded, headers shaped as Slack signs) may be this large.
        allow_larger_bodies(app, EVENTS_PATH, INTERACTION_BYTES, when=_may_be_interaction)
        if self.bolt.oauth_flow is not None:
            app.router.add_get(INSTALL_PATH, self._install)
            app.router.add_get(REDIRECT_PATH, self._redirect)

    @asynccontextmanager
    async def serving(self, service: RunService) -> AsyncIterator[None]:
        """Bind the run service, register the surface, and run Socket Mode if configured."""
        self._service = service
        self.listeners.bind(service)
        store = self.bolt.installation_store
        if isinstance(store, EncryptedInstallationStore):
            store.port = service.stores.installations
        service.add_surface(self.surface)
        token = self.settings.app_token
        if token is not None:
            client = AsyncWebClient(base_url=self.api_url)
            await _check_app_token(client, token.get_secret_value())
            self._socket = _AckedSocketModeHandler(
                self.bolt, token.get_secret_value(), web_client=client, acked=self._acked
            )
            await self._socket.connect_async()  # type: ignore[no-untyped-call]
            log.info("slack: connected over Socket Mode")
        try:
            yield
        finally:
            if self._socket is not None:
                await self._socket.close_async()  # type: ignore[no-untyped-call]
                self._socket = None
            await self.listeners.close()
            if self._session is not None:
                await self._session.close()
                self._session = None
            self._clients.clear()

    async def client_for(self, team: str) -> AsyncWebClient:
        """The Web API client holding ``team``'s bot token."""
        token = await self._token_for(team)
        client = self._clients.get(token)
        if client is None:
            if self._session is None:
                self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
            client = AsyncWebClient(token=token, base_url=self.api_url, session=self._session)
            self._clients[token] = client
        return client

    async def _token_for(self, team: str) -> str:
        if self.settings.bot_token is not None:
            return self.settings.bot_token.get_secret_value()
        store = self.bolt.installation_store
        bot = await store.async_find_bot(enterprise_id=None, team_id=team) if store else None
        if bot is None or not bot.bot_token:
            return ""  # Slack answers not_authed, which says what to do
        return str(bot.bot_token)

    def _admin_service(self) -> AdminService | None:
        return self._app.get(ADMIN_SERVICE) if self._app is not None else None

    def _bolt_app(self) -> AsyncApp:
        settings = self.settings
        options: dict[str, Any] = {
            "request_verification_enabled": False,  # verified in _events, once
            # Ack when the listener returns, instead of bolt polling for it every 10 ms.
            "process_before_response": True,
            "raise_error_for_unhandled_request": False,
            "logger": _bolt_logger(),
        }
        secret = settings.signing_secret
        if secret is not None:
            options["signing_secret"] = secret.get_secret_value()
        if settings.bot_token is not None:
            token = settings.bot_token.get_secret_value()
            options["client"] = AsyncWebClient(token=token, base_url=self.api_url)
        else:
            options["client"] = AsyncWebClient(base_url=self.api_url)
            options["oauth_settings"] = oauth_settings(settings)
        app = AsyncApp(**options)
        if "oauth_settings" in options:
            # An uninstall or revoked token deletes the workspace's installation.
            app.enable_token_revocation_listeners()
        return app

    async def _events(self, request: web.Request) -> web.Response:
        body = await request.read()
        if self._secret is None:
            return _refuse(404, "Slack events arrive over Socket Mode here, not HTTP.")
        signature = verify(self._secret, body, request.headers, now=time.time())
        if signature is None:
            log.warning("slack request refused: its signature does not check out")
            return _refuse(401, BAD_SIGNATURE)
        try:
            payload = parse(body, request.content_type)
        except NotAPayload as error:
            log.warning("slack request refused: a signed body that is not a Slack payload")
            log.debug("slack body refused: %s", error)
            return _refuse(400, BAD_BODY)
        while True:
            first = self.seen.claim(signature)
            if first is None:
                break
            try:
                answered = await asyncio.shield(first)
            except asyncio.CancelledError:
                if first.cancelled():
                    continue  # the first never finished: this one is the first now
                raise
            log.info("slack request seen before (a replay); answered as the first was")
            return _replayed(answered)
        # An answer click keeps no record here: its key is written with its outcome
        # (``Listeners.click``), and a replay, acked as every click is, changes nothing.
        recorded = not self._keys_clicks(payload)
        shared = await self._claim_shared(signature) if recorded else None
        if shared is not None:
            self.seen.settle(signature, shared)
            log.info("slack request seen by another process (a replay); answered as it was")
            return _replayed(shared)
        try:
            # The body as parsed above, so bolt does not parse it again. Bolt takes a
            # parsed body only under its Socket Mode name; the mode's one other effect
            # is to skip bolt's signature check, which is off and done above anyway.
            bolt_request = AsyncBoltRequest(
                body=payload,
                query=request.query_string,
                headers=dict(request.headers),
                mode="socket_mode",
            )
        except Exception:  # noqa: BLE001  bolt reads its context from fields we do not model
            self.seen.settle(signature, None)
            if recorded:
                await self._settle_shared(signature, None)
            log.warning("slack request refused: bolt could not read the signed payload")
            return _refuse(400, BAD_BODY)
        settled: StoredResponse | None = None
        # The record is settled before the answer, so it is written while Slack waits.
        with self._acked():
            try:
                response = await self.bolt.async_dispatch(bolt_request)
                settled = _answered(response)
            finally:
                self.seen.settle(signature, settled)
                # Before the answer: a replay that reaches a restarted process is then
                # answered exactly as this one is.
                if recorded:
                    await self._settle_shared(signature, settled)
        return _replayed(settled)

    def _keys_clicks(self, payload: dict[str, Any]) -> bool:
        service = self._service
        return service is not None and service.keeps_request_keys and is_click(payload)

    async def _claim_shared(self, signature: str) -> StoredResponse | None:
        """The answer another process gave this request, if one did; else None, and this
        request is now on record (unless it was already, in flight or cut short by a
        crash: then it runs, and what it would repeat is refused further in)."""
        if self._service is None:
            return None
        now = time.time()
        try:
            seen = await self._service.stores.replays.claim(
                f"slack:{signature}", now=now, until=now + KEEP_SECONDS
            )
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("slack replay record unavailable (%s); going on", type(error).__name__)
            return None
        return seen.answered

    async def _settle_shared(self, signature: str, answered: StoredResponse | None) -> None:
        if self._service is None:
            return
        try:
            await self._service.stores.replays.settle(f"slack:{signature}", answered)
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("slack replay record unavailable (%s); not kept", type(error).__name__)

    def _acked(self) -> AbstractContextManager[None]:
        """Around a request Slack waits on (its ack, 3 s at most, over HTTP or Socket
        Mode): our own background work yields to it (``bot.service.running.foreground``)."""
        return nullcontext() if self._service is None else self._service.foreground.request()

    async def _install(self, request: web.Request) -> web.Response:
        flow = self._oauth_flow()
        return await to_aiohttp_response(await flow.handle_installation(_oauth_request(request)))

    async def _redirect(self, request: web.Request) -> web.Response:
        flow = self._oauth_flow()
        return await to_aiohttp_response(await flow.handle_callback(_oauth_request(request)))

    def _oauth_flow(self) -> AsyncOAuthFlow:
        """Bolt's OAuth flow: its routes are mounted only when the app has one."""
        flow = self.bolt.oauth_flow
        assert flow is not None
        return flow


def _may_be_interaction(request: web.Request) -> bool:
    """An interactivity payload as Slack sends it, as far as its headers tell."""
    return request.content_type == FORM and may_be_signed(request.headers, now=time.time())


def _oauth_request(request: web.Request) -> AsyncBoltRequest:
    """An OAuth step's request as bolt reads it: the query and the headers, no body."""
    return AsyncBoltRequest(body="", query=request.query_string, headers=dict(request.headers))


class _AckedSocketModeHandler(AsyncSocketModeHandler):
    """Socket Mode with each envelope handled up to its ack as a request Slack waits on."""

    def __init__(
        self,
        app: AsyncApp,
        app_token: str,
        *,
        web_client: AsyncWebClient,
        acked: Callable[[], AbstractContextManager[None]],
    ) -> None:
        super().__init__(app, app_token, web_client=web_client)
        self._acked = acked

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]  # bolt's own signature
        with self._acked():
            await super().handle(client, req)


async def _check_app_token(client: AsyncWebClient, token: str) -> None:
    """Fail the start with one line on a token Slack refuses.

    slack_sdk's Socket Mode client retries a refused token forever, every
    ten seconds; a wrong token is a configuration error, not an outage.
    Outages (rate limits, network) are left to its retries.
    """
    try:
        await client.apps_connections_open(app_token=token)
    except SlackApiError as error:
        code = str(error.response.get("error", ""))
        if code in (
            "invalid_auth",
            "not_authed",
            "token_revoked",
            "account_inactive",
            "missing_scope",
            "not_allowed_token_type",
        ):
            raise BotError(
                f"SLACK_APP_TOKEN was refused by Slack ({code}): generate an app-level "
                "token with the connections:write scope (docs/slack.md, step 2)"
            ) from None
    except aiohttp.ClientError:
        pass


class _QuietBolt(logging.Filter):
    """Drops bolt's warning that SLACK_BOT_TOKEN (read from the environment) is unused.

    We hand bolt a client of our own (it carries SLACK_API_URL); bolt still
    reads the variable itself and warns at every start.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "will be unused" not in record.getMessage()


def _bolt_logger() -> logging.Logger:
    logger = logging.getLogger("slack_bolt.app")
    if not any(isinstance(f, _QuietBolt) for f in logger.filters):
        logger.addFilter(_QuietBolt())
    return logger


def _answered(response: BoltResponse) -> StoredResponse:
    """Bolt's answer as bytes, kept to answer a replay the same way."""
    default = "application/json" if response.body.startswith("{") else "text/plain"
    content_type = (response.headers.get("content-type") or [default])[0]
    return StoredResponse(response.status, response.body.encode(), content_type.split(";")[0])


def _replayed(answered: StoredResponse) -> web.Response:
    return web.Response(
        status=answered.status, body=answered.body, content_type=answered.content_type
    )


def _refuse(status: int, error: str) -> web.Response:
    return web.json_response({"ok": False, "error": error}, status=status)
