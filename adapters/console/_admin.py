"""The console's admin API: ``/api/admin/...`` translated into ``bot.admin`` commands.

Every route builds the command's words from the path and body (never by
splicing text into a command line) and hands them to ``AdminService``,
which authorizes, executes and audits. Who acts is the console's
signed-in person (``console:<name>``), an admin when listed in
``BOT_ADMINS``. With sign-in off (loopback, no credentials configured) the
console has one operator, the OS user who started it, trusted as the
shell's operator is: an admin.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aiohttp import web

from adapters.console._http import ConsoleError, Handler, read_json, signed_in, text_field
from adapters.console._shown import shown
from bot.admin import ADMIN_SERVICE, json_of, results
from bot.contract.identity import console_id
from bot.service.answering.outcomes import Responder
from bot.serving import SIGN_IN

SEND_REASON = 'Send a JSON object like {"reason": "wrong environment"} (the reason is optional).'
SEND_DURATION = 'Send a JSON object like {"duration": "2h"}.'
NO_ADMIN = "Admin commands are not available in this console; start the bot with its store."
_PENDING_OPTIONS = ("channel", "user", "name", "after", "limit")
_HISTORY_OPTIONS = (
    "status",
    "channel",
    "surface",
    "user",
    "by",
    "decision",
    "since",
    "until",
    "after",
    "limit",
)


class ConsoleAdmin:
    """Handlers for ``/api/admin/...``; each one is one ``AdminService.handle`` call."""

    async def pending(self, request: web.Request) -> web.Response:
        return await _handle(request, _listing(request, "pending", _PENDING_OPTIONS))

    async def history(self, request: web.Request) -> web.Response:
        return await _handle(request, _listing(request, "history", _HISTORY_OPTIONS))

    async def stats(self, request: web.Request) -> web.Response:
        return await _handle(request, ["stats"])

    async def show(self, request: web.Request) -> web.Response:
        return await _handle(request, ["show", request.match_info["interrupt_id"]])

    async def audit(self, request: web.Request) -> web.Response:
        return await _handle(request, ["audit", request.match_info["rid"]])

    async def cancel(self, request: web.Request) -> web.Response:
        body = await read_json(request, expected=SEND_REASON)
        reason = text_field(body, "reason", expected=SEND_REASON).strip()
        words = ["cancel", request.match_info["interrupt_id"], *([reason] if reason else [])]
        return await _handle(request, words)

    async def resend(self, request: web.Request) -> web.Response:
        await read_json(request, expected="Send an empty JSON object: {}.")
        return await _handle(request, ["resend", request.match_info["interrupt_id"]])

    async def extend(self, request: web.Request) -> web.Response:
        body = await read_json(request, expected=SEND_DURATION)
        duration = text_field(body, "duration", expected=SEND_DURATION).strip()
        if not duration:
            raise ConsoleError(400, SEND_DURATION)
        return await _handle(request, ["extend", request.match_info["interrupt_id"], duration])


def _listing(request: web.Request, verb: str, options: tuple[str, ...]) -> list[str]:
    """A listing's command: its filters from the query string, as the grammar spells them."""
    words = [verb]
    for option in options:
        value = request.query.get(option)
        if value:
            words.append(f"{option}={value}")
    return words


async def _handle(request: web.Request, words: list[str]) -> web.Response:
    admin = request.app.get(ADMIN_SERVICE)
    if admin is None:
        raise ConsoleError(503, NO_ADMIN)
    result = await admin.handle(words, who=_responder(request))
    # The panel sends back only ids it was given (ours, plain ASCII), so every
    # string it gets can be the shown one: payloads, names, reasons, sentences.
    return web.json_response(shown(json_of(result)), status=_status(result), dumps=_dumps)


def _responder(request: web.Request) -> Responder:
    # The name the console's guard established, never anything the body says.
    name = signed_in(request)
    operator = not request.app[SIGN_IN].required
    return Responder(id=console_id(name), name=name, is_admin=operator)


def _status(result: results.AdminResult) -> int:
    match result:
        case results.AdminsOnly():
            return 403
        case results.UnknownId():
            return 404
        case results.NotOpen():
            return 409
        case results.TooLong() | results.CommandInvalid():
            return 422
        case _:
            return 200


def _dumps(data: object) -> str:
    # Enum members are str subclasses; anything else unexpected is shown, not fatal.
    return json.dumps(data, ensure_ascii=False, default=str)


def add_admin_routes(app: web.Application, wrap: Callable[[Handler], Handler]) -> None:
    """The admin API under ``/api/admin``, each handler wrapped by the console's guard."""
    admin = ConsoleAdmin()
    app.router.add_get("/api/admin/pending", wrap(admin.pending))
    app.router.add_get("/api/admin/history", wrap(admin.history))
    app.router.add_get("/api/admin/stats", wrap(admin.stats))
    app.router.add_get("/api/admin/questions/{interrupt_id}", wrap(admin.show))
    app.router.add_get("/api/admin/runs/{rid}/audit", wrap(admin.audit))
    app.router.add_post("/api/admin/questions/{interrupt_id}/cancel", wrap(admin.cancel))
    app.router.add_post("/api/admin/questions/{interrupt_id}/resend", wrap(admin.resend))
    app.router.add_post("/api/admin/questions/{interrupt_id}/extend", wrap(admin.extend))
