"""``mount_console``: the console's routes on the shared aiohttp application."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from adapters.console._admin import add_admin_routes
from adapters.console._api import ConsoleApi
from adapters.console._events import EventStream
from adapters.console._http import ConsoleError, Handler, guarded
from adapters.console._streams import ConsoleLimits, StreamGate
from adapters.console._surface import ConsoleSurface
from adapters.console._wording import NO_SUCH_FILE, PAGE
from bot.service.answering.policy import RequesterOrApprovers

STATIC = Path(__file__).parent / "static"
# Only these are served, so a crafted path can never reach another file.
ASSETS = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "form.js": "text/javascript",
    "style.css": "text/css",
    "admin.html": "text/html",
    "admin.js": "text/javascript",
}


def mount_console(
    app: web.Application,
    surface: ConsoleSurface,
    *,
    policy: RequesterOrApprovers,
    limits: ConsoleLimits | None = None,
    clock: Callable[[], float] = time.time,
) -> None:
    """Add the page, its assets, the JSON API and the event stream to ``app``.

    Who is asking comes from ``app[SIGN_IN]`` and which sites may post from
    ``app[ALLOWED_HOSTS]`` (``bot.serving``); when sign-in is required every
    route asks for HTTP Basic credentials. ``policy`` is the service's own,
    so the page marks exactly the questions the service would accept.
    ``clock`` is what the per-address answer limit counts by.
    """
    limits = limits or ConsoleLimits()
    api = ConsoleApi(surface, policy=policy, limits=limits, clock=clock)
    # Read once here: a few kilobytes, and a missing file fails at start.
    files = {name: (STATIC / name).read_bytes() for name in ASSETS}
    files["index.html"] = with_wording(files["index.html"])

    async def index(_request: web.Request) -> web.Response:
        return _file(files, "index.html")

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in files:
            raise ConsoleError(404, NO_SUCH_FILE)
        return _file(files, name)

    def page(handler: Handler) -> Handler:
        return guarded(handler, api=False, max_json_depth=limits.max_json_depth)

    def endpoint(handler: Handler) -> Handler:
        return guarded(handler, api=True, max_json_depth=limits.max_json_depth)

    app.router.add_get("/", page(index))
    app.router.add_get("/static/{name}", page(asset))
    app.router.add_get("/api/conversations", endpoint(api.conversations))
    app.router.add_get("/api/conversations/{cid}", endpoint(api.conversation))
    app.router.add_post("/api/conversations/{cid}/messages", endpoint(api.post_message))
    app.router.add_post("/api/answer", endpoint(api.answer))
    app.router.add_get(
        "/api/events", endpoint(EventStream(surface, StreamGate(limits))), allow_head=False
    )

    async def admin_page(_request: web.Request) -> web.Response:
        return _file(files, "admin.html")

    app.router.add_get("/admin", page(admin_page))
    add_admin_routes(app, endpoint)

    async def close_streams(_app: web.Application) -> None:
        await surface.close()

    app.on_shutdown.append(close_streams)


def with_wording(page: bytes) -> bytes:
    """The page with its sentences inlined as a JSON data block (not a script: CSP allows it)."""
    data = json.dumps(PAGE, ensure_ascii=False).replace("<", "\\u003c")
    return page.replace(b"{{WORDING}}", data.encode())


def _file(files: dict[str, bytes], name: str) -> web.Response:
    return web.Response(body=files[name], content_type=ASSETS[name], charset="utf-8")
