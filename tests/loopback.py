"""An aiohttp app served on loopback for the length of a block, written once.

Tests stand up small servers of their own (a webhook target, a model's ``/v1/models``,
a token endpoint) for a bot process or a client to call; each is this with its routes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


@asynccontextmanager
async def serving(app: web.Application, port: int, **options: Any) -> AsyncIterator[str]:
    """``app`` listening on ``127.0.0.1:port`` until the block ends; its base URL.

    ``options`` go to ``web.AppRunner`` (``access_log=None``: no access log lines).
    """
    runner = web.AppRunner(app, **options)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
