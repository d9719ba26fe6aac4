"""Signed Slack button clicks at 50 concurrent: our bot against a bare slack-bolt app.

Starts `python -m bot` (SQLite in a temporary folder, Slack pointed at a
loopback Web API run by this script), parks N demo runs on their first
question through signed ``app_mention`` events, then sends N signed
``block_actions`` clicks, each with its own valid token, 50 at a time, and
times each until its ack (the HTTP 200). Each click is checked, spent and
its resume scheduled before the ack; the resume (edit the question, continue
the run, post the approval question) runs after it, in the same process,
once the clicks stop arriving (``bot.service.running.foreground``: acks first, resumes at
most 1 s later); the figures include how long after each round's last ack
its resumes were all done.
The baseline is a bare slack-bolt ``AsyncApp`` in its own process on the same
aiohttp adapter, verifying signatures, with ``authorize=`` returning a fixed
result and a no-op action handler, measured in the same run with the same
payloads; it is shown with bolt's defaults and with
``process_before_response`` (which we use: no 10 ms ack polling). The fake
Slack runs in its own process. On a shared machine, load changes from
second to second, so the clicks go in interleaved rounds (baseline, then
ours, then wait until our resumes are done) and the figures pool them.
Every response must be 200.

Run: `.venv/bin/python bench/slack_click.py [n]` (default 1000).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.console import until_ready  # noqa: E402 (needs ROOT on the path)
from tests.e2e._server import free_port  # noqa: E402
from tests.fakes.slack_api import (  # noqa: E402
    BOT_TOKEN,
    SIGNING_SECRET,
    Call,
    buttons,
    event_callback,
    first_button_click,
    form_body,
    mention,
    sign,
)

CLIENTS = 50
ROUNDS = 5
USER = "U0BENCH"


def bare_server(port: int, *, before_response: bool) -> None:
    """The baseline: slack-bolt with nothing of ours, on the same aiohttp adapter."""
    import re

    from aiohttp import web
    from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.authorization import AuthorizeResult

    async def authorize(**_: Any) -> AuthorizeResult:
        return AuthorizeResult(
            enterprise_id=None,
            team_id="T0TEST",
            bot_token=BOT_TOKEN,
            bot_user_id="UBOT",
            bot_id="B0BOT",
        )

    bolt = AsyncApp(
        signing_secret=SIGNING_SECRET, authorize=authorize, process_before_response=before_response
    )

    @bolt.action(re.compile(".*"))
    async def noop(ack: Any) -> None:
        await ack()

    async def events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await bolt.async_dispatch(await to_bolt_request(request)))

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/slack/events", events)
    app.router.add_get("/healthz", healthz)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def ready(url: str, path: str = "/healthz") -> None:
    async with aiohttp.ClientSession() as session:
        await until_ready(session, f"{url}{path}")


async def signed_post(session: aiohttp.ClientSession, url: str, body: str, kind: str) -> float:
    headers = {"Content-Type": kind, **sign(body)}
    started = time.perf_counter()
    async with session.post(f"{url}/slack/events", data=body.encode(), headers=headers) as r:
        await r.read()
        if r.status != 200:
            raise RuntimeError(f"status {r.status}: {await r.text()}")
    return time.perf_counter() - started


async def park(url: str, fake_url: str, n: int) -> list[Call]:
    """N demo runs, each waiting on its first question; returns the posted questions."""
    async with aiohttp.ClientSession() as session:
        sem = asyncio.Semaphore(CLIENTS)

        async def one(i: int) -> None:
            event = mention("deploy web", user=USER, ts=f"{1_000_000 + i}.000100")
            async with sem:
                await signed_post(
                    session, url, json.dumps(event_callback(event)), "application/json"
                )

        await asyncio.gather(*(one(i) for i in range(n)))
        return await recorded(session, fake_url, "chat.postMessage", n)


async def recorded(
    session: aiohttp.ClientSession, fake_url: str, method: str, n: int
) -> list[Call]:
    """Wait until the fake Slack (another process) has recorded ``n`` such calls."""
    for _ in range(6000):
        async with session.get(f"{fake_url}/_calls", params={"method": method}) as response:
            calls = [
                Call(c["method"], c["args"], c["token"], response=c["response"])
                for c in await response.json()
            ]
        calls = [
            c for c in calls if c.response and (method != "chat.postMessage" or buttons(c.args))
        ]
        if len(calls) >= n:
            return calls
        await asyncio.sleep(0.1)
    raise RuntimeError(f"only {len(calls)} {method} calls recorded")


async def clicks(url: str, bodies: list[str]) -> tuple[float, list[float]]:
    """Send every body 50 at a time; (requests per second, ack latencies)."""
    connector = aiohttp.TCPConnector(limit=CLIENTS)
    async with aiohttp.ClientSession(connector=connector) as session:
        queue = list(reversed(bodies))
        latencies: list[float] = []

        async def client() -> None:
            while queue:
                body = queue.pop()
                latencies.append(
                    await signed_post(session, url, body, "application/x-www-form-urlencoded")
                )

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(CLIENTS)))
        elapsed = time.perf_counter() - started
    return len(bodies) / elapsed, latencies


def click_bodies(questions: list[Call]) -> list[str]:
    bodies = []
    for question in questions:
        bodies.append(form_body(first_button_click(question, user=USER)))
    return bodies


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q * 100) - 1] * 1000


def spawn(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 (our own interpreter and modules)
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def bot_env(folder: str, *, port: int, fake_url: str) -> dict[str, str]:
    """The bot's environment: SQLite in ``folder``, Slack pointed at the fake Web API."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "SLACK_"))},
        "PORT": str(port),
        "DATABASE_URL": f"sqlite:///{folder}/bot.sqlite3",
        "BOT_DATA_DIR": f"{folder}/var",
        "BOT_LOG_LEVEL": "WARNING",
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": f"{fake_url}/api/",
    }


async def main(n: int) -> int:
    ports = {name: free_port() for name in ("fake", "ours", "bare", "bare_before")}
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    with tempfile.TemporaryDirectory() as folder:
        env = bot_env(folder, port=ports["ours"], fake_url=urls["fake"])
        processes = [
            # The fake Slack gets its own process, so its work never delays the clients.
            spawn(["-m", "tests.fakes.slack_api", str(ports["fake"])]),
            # BENCH_PROFILE=out.prof profiles the bot (diagnosis only; it slows it down).
            spawn(
                [
                    *(
                        ["-m", "cProfile", "-o", os.environ["BENCH_PROFILE"]]
                        if os.environ.get("BENCH_PROFILE")
                        else []
                    ),
                    "-m",
                    "bot",
                ],
                env,
            ),
            spawn([__file__, "--bare-server", str(ports["bare"]), "default"]),
            spawn([__file__, "--bare-server", str(ports["bare_before"]), "before"]),
        ]
        try:
            await ready(urls["fake"], "/_calls")
            for name in ("ours", "bare", "bare_before"):
                await ready(urls[name])
            bodies = click_bodies(await park(urls["ours"], urls["fake"], n))
            for name in ("bare", "bare_before"):
                await clicks(urls[name], bodies[: CLIENTS * 4])  # warm-up
            # Interleaved rounds: on a shared machine each contender sees the same load.
            results: dict[str, tuple[float, list[float]]] = {}
            elapsed: dict[str, float] = {}
            drained: list[float] = []
            size = -(-n // ROUNDS)
            for start in range(0, n, size):
                chunk = bodies[start : start + size]
                for name in ("bare", "bare_before", "ours"):
                    rps, latencies = await clicks(urls[name], chunk)
                    done, pooled = results.get(name, (0.0, []))
                    results[name] = (done + len(chunk), pooled + latencies)
                    elapsed[name] = elapsed.get(name, 0.0) + len(chunk) / rps
                # Let the resumes these clicks owe finish (each posts the approval
                # question), so they never run during the next round's baseline.
                acked = time.perf_counter()
                async with aiohttp.ClientSession() as session:
                    await recorded(
                        session, urls["fake"], "chat.postMessage", n + start + len(chunk)
                    )
                drained.append(time.perf_counter() - acked)
            results = {k: (count / elapsed[k], lat) for k, (count, lat) in results.items()}
            async with aiohttp.ClientSession() as session:
                updates = await recorded(session, urls["fake"], "chat.update", n)
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=30)
    labels = {
        "bare": "bare bolt (defaults)",
        "bare_before": "bare bolt (process_before_response)",
        "ours": "ours",
    }
    print(f"{n} signed block_actions clicks, {CLIENTS} concurrent, each with a valid token")
    print(f"{'':38}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for name, (rps, lat) in results.items():
        print(
            f"{labels[name]:38}{rps:>8.0f}{quantile(lat, 0.5):>9.1f}{quantile(lat, 0.99):>9.1f}"
            f"{max(lat) * 1000:>9.1f}"
        )
    ours_rps, ours_lat = results["ours"]

    def ratios(name: str) -> tuple[float, float]:
        rps, lat = results[name]
        return ours_rps / rps, quantile(ours_lat, 0.99) / quantile(lat, 0.99)

    # The baseline is a bare app as bolt makes it; the tuned one is shown beside it.
    throughput, p99 = ratios("bare")
    print(
        f"ours / {labels['bare']}: throughput {throughput:.2f}x (target >= 0.6), "
        f"p99 {p99:.2f}x (target <= 1.5)"
    )
    throughput, p99 = ratios("bare_before")
    print(f"ours / {labels['bare_before']}: throughput {throughput:.2f}x, p99 {p99:.2f}x")
    print(f"questions edited after their click (resumes done): {len(updates)} of {n}")
    per_round = len(bodies) // len(drained)
    print(
        f"a round's {per_round} resumes were all done {statistics.median(drained) * 1000:.0f} ms"
        f" after its last ack (median of {len(drained)} rounds; the fake Slack's own work included)"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--bare-server":
        bare_server(int(sys.argv[2]), before_response=sys.argv[3] == "before")
        sys.exit(0)
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)))
