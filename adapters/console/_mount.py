"""``mount_console``: the console's routes on the shared aiohttp application."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from adapters.console._admin import add_admin_routes
from adapters.console._api import ConsoleApi
from adapters.console._events import EventStream
from adapters.console._http import ConsoleError, Handler, guarded
from adapters.console._surface import ConsoleSurface
from adapters.console._wording import NO_SUCH_FILE

STATIC = Path(__file__).parent / "static"
# Only these are served, so a crafted path can never reach another file.
ASSETS = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "style.css": "text/css",
    "admin.html": "text/html",
    "admin.js": "text/javascript",
}


def mount_console(app: web.Application, surface: ConsoleSurface, *, password: str | None) -> None:
    """Add the page, its assets, the JSON API and the event stream to ``app``.

    With ``password`` set, every one of them asks for HTTP Basic auth.
    """
    api = ConsoleApi(surface)
    # Read once here: a few kilobytes, and a missing file fails at start.
    files = {name: (STATIC / name).read_bytes() for name in ASSETS}

    async def index(_request: web.Request) -> web.Response:
        return _file(files, "index.html")

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in files:
            raise ConsoleError(404, NO_SUCH_FILE)
        return _file(files, name)

    def page(handler: Handler) -> Handler:
        return guarded(handler, password=password, api=False)

    def endpoint(handler: Handler) -> Handler:
        return guarded(handler, password=password, api=True)

    app.router.add_get("/", page(index))
    app.router.add_get("/static/{name}", page(asset))
    app.router.add_get("/api/conversations", endpoint(api.conversations))
    app.router.add_get("/api/conversations/{cid}", endpoint(api.conversation))
    app.router.add_post("/api/conversations/{cid}/messages", endpoint(api.post_message))
    app.router.add_post("/api/answer", endpoint(api.answer))
    app.router.add_get("/api/events", endpoint(EventStream(surface)), allow_head=False)

    async def admin_page(_request: web.Request) -> web.Response:
        return _file(files, "admin.html")

    app.router.add_get("/admin", page(admin_page))
    add_admin_routes(app, endpoint)

    async def close_streams(_app: web.Application) -> None:
        await surface.close()

    app.on_shutdown.append(close_streams)


def _file(files: dict[str, bytes], name: str) -> web.Response:
    return web.Response(body=files[name], content_type=ASSETS[name], charset="utf-8")
