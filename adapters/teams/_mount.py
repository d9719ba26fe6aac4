"""``mount_teams``: ``POST /api/messages`` on the shared aiohttp application.

Status codes a platform engineer can alert on: 400 for a body that is not
an activity, 401 for any authentication failure, 415 for a non-JSON body,
200 with the invoke response for ``Action.Execute``, 201 otherwise. Never a
500 for bad input.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from adapters.teams._bot import TeamsBot
from adapters.teams._connector import Connector
from adapters.teams._edge import NotAnActivity, parse
from adapters.teams._sdk import BadActivity, TeamsSdk, Unauthenticated
from adapters.teams._sdk_choice import open_sdk
from adapters.teams._surface import TeamsSurface
from adapters.teams.settings import TeamsSettings
from bot.admin import ADMIN_SERVICE
from bot.service.running.runs import RUN_SERVICE

log = logging.getLogger(__name__)

ROUTE = "/api/messages"
# botbuilder refetches keys on the event loop once its copy is an hour old; stay fresher
# (the Agents SDK fetches in a thread, but the first request need not wait either).
KEYS_REFRESH_SECONDS = 30 * 60
KEYS_TIMEOUT_SECONDS = 15.0
NOT_JSON = "Send Bot Framework activities as JSON (Content-Type: application/json)."
NOT_ACTIVITY = (
    "The body is not a Bot Framework activity (a JSON object with a type, "
    "serviceUrl, conversation and from)."
)
UNAUTHENTICATED = "The request's Authorization header did not prove it came from Teams."
STARTING = "The bot is starting; the channel will retry."


def mount_teams(
    app: web.Application,
    settings: TeamsSettings,
    *,
    local: bool,
) -> TeamsSurface | None:
    """Add the Teams endpoint to ``app`` and return its surface; None when Teams is off.

    ``local`` says the server is bound to loopback, where Teams is on by
    default in emulator mode.
    """
    if not settings.enabled(local=local):
        log.info("Teams off: set MicrosoftAppId (and MicrosoftAppPassword) to enable it")
        return None
    sdk = open_sdk(settings)
    log.info("Teams on %s (BOT_TEAMS_SDK=%s)", settings.sdk_name(), settings.sdk)
    if sdk.emulator:
        log.warning(
            "Teams in emulator mode: no MicrosoftAppId, so activities on %s are NOT "
            "authenticated; for local use with the Bot Framework Emulator only",
            ROUTE,
        )
    connector = Connector(token=sdk.bot_token)

    def schema_of(name: str) -> dict[str, Any] | None:
        service = app.get(RUN_SERVICE)
        registration = service.views.registration(name) if service else None
        return registration.response_schema.model_json_schema() if registration else None

    surface = TeamsSurface(connector, schema_of=schema_of)
    bot = TeamsBot(surface, lambda: app[RUN_SERVICE], lambda: app.get(ADMIN_SERVICE))
    app.router.add_post(ROUTE, _endpoint(sdk, bot))
    if not sdk.emulator:
        app.cleanup_ctx.append(_fresh_signing_keys(sdk))

    async def close(_app: web.Application) -> None:
        await connector.close()

    app.on_cleanup.append(close)
    return surface


def _fresh_signing_keys(
    sdk: TeamsSdk,
) -> Callable[[web.Application], AsyncIterator[None]]:
    """Fetch the channel's signing keys at start and every half hour, off the event loop."""

    async def refresh() -> None:
        try:
            await asyncio.wait_for(sdk.refresh_signing_keys(), KEYS_TIMEOUT_SECONDS)
        except Exception:  # noqa: BLE001  a failed fetch is retried; the SDK's cache stays
            log.warning("could not fetch the Teams signing keys from %s", sdk.metadata_url)

    async def forever() -> None:
        while True:
            await asyncio.sleep(KEYS_REFRESH_SECONDS)
            await refresh()

    async def lifecycle(_app: web.Application) -> AsyncIterator[None]:
        await refresh()
        task = asyncio.get_running_loop().create_task(forever(), name="teams signing keys")
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return lifecycle


def _endpoint(sdk: TeamsSdk, bot: TeamsBot) -> Any:
    async def messages(request: web.Request) -> web.Response:
        if request.content_type != "application/json":
            return _problem(415, NOT_JSON)
        if RUN_SERVICE not in request.app:
            return _problem(503, STARTING)
        try:
            body = parse(await request.read())
            activity = sdk.parse(body)
        except (NotAnActivity, BadActivity):
            log.warning("Teams request refused: the body is not an activity")
            return _problem(400, NOT_ACTIVITY)
        try:
            authenticated = await sdk.authenticate(
                activity, request.headers.get("Authorization", "")
            )
        except Unauthenticated as error:
            log.warning("Teams request refused: %s", error, extra={"path": request.path})
            return _problem(401, UNAUTHENTICATED)
        # Teams waits on this response (an invoke's card): our own work yields to it.
        with request.app[RUN_SERVICE].foreground.request():
            reply = await sdk.process(authenticated, activity, body, bot.on_turn)
        if reply is None:
            return web.Response(status=201)
        if reply.body is None:
            return web.Response(status=reply.status)
        return web.json_response(reply.body, status=reply.status)

    return messages


def _problem(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)
