"""/livez and /readyz on a real `python -m bot` process whose PostgreSQL goes away and back."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests import waiting
from tests.e2e._private_postgres import PrivateCluster
from tests.e2e._server import StartBot, json_lines

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

KEYS = "k1:" + "x" * 48


async def status(http: aiohttp.ClientSession, url: str) -> int:
    async with http.get(url) as response:
        return response.status


async def test_a_database_outage_fails_readiness_not_liveness_and_both_recover(
    start_bot: StartBot, http: aiohttp.ClientSession, cluster: PrivateCluster
) -> None:
    """PostgreSQL stopped: /livez 200, /readyz and /healthz 503; started again: all 200."""
    bot = await start_bot(DATABASE_URL=cluster.url, BOT_SIGNING_KEYS=KEYS)
    live, ready = f"{bot.url}/livez", f"{bot.url}/readyz"
    assert [await status(http, live), await status(http, ready)] == [200, 200]

    await asyncio.to_thread(cluster.stop)
    assert await status(http, ready) == 503
    assert await status(http, f"{bot.url}/healthz") == 503
    assert await status(http, live) == 200

    await asyncio.to_thread(cluster.start)

    async def ready_again() -> bool:
        return await status(http, ready) == 200

    await waiting.eventually(ready_again, what="/readyz 200 once PostgreSQL is back")
    assert await status(http, live) == 200
    assert bot.running and bot.starts == 1  # the same process: nothing restarted
    said = [r for r in json_lines(bot.log_text()) if "readiness" in str(r.get("message"))]
    assert said and all(r["level"] == "warning" for r in said), said
    assert "Traceback" not in "".join(str(r) for r in said)
