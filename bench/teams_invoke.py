"""The Teams ``Action.Execute`` invoke path under 50 concurrent clients, on loopback,
on each SDK Teams can run on (``BOT_TEAMS_SDK``: botbuilder-core, then the Agents SDK).

Per SDK, two processes, one SDK after the other (so they never share the CPU):

- the bot (`python -m bot`, emulator mode so auth is off, SQLite in a
  temporary folder) with N demo runs parked on their first question, their
  cards posted to a loopback Bot Framework connector in this process; 50
  clients answer them with ``adaptiveCard/action`` invokes (check, spend,
  the updated card back; the resume runs after);
- a bare bot: the same SDK's pipeline through the same seam
  (``adapters.teams._sdk_choice``) answering every invoke with a fixed card and
  nothing else, which is the floor that SDK sets.

Every invoke must get 200 with a card saying who answered (the bare bot: its
fixed card); anything else is counted and fails the run. The last line compares
the two SDKs' answers.

Run: `.venv/bin/python bench/teams_invoke.py [n]` (default 1000).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.console import (  # noqa: E402
    CLIENTS,
    Phase,
    Request,
    measure,
    run_from_argv,
    until_ready,
)
from tests.e2e._server import free_port, logged_process  # noqa: E402
from tests.e2e._teams import execute, message  # noqa: E402
from tests.fakes.bf_connector import FakeConnector  # noqa: E402

SDKS = ("botbuilder", "agents")
DEADLINE_SECONDS = 1800.0
COLLECT_SECONDS = 300.0
FIXED_CARD = {
    "type": "AdaptiveCard",
    "version": "1.5",
    "body": [{"type": "TextBlock", "text": "ok"}],
}


class Process:
    """A server process on a free loopback port; ``stop`` always leaves it dead."""

    def __init__(self, folder: Path, args: Sequence[str], env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / f"{args[-1].replace('/', '_')}.log"
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("BOT_", "OPENAI_", "Microsoft", "TEAMS_", "TO_BOT_"))
        }
        self.process = logged_process(
            [sys.executable, *args],
            self.log_path,
            env={**inherited, "PORT": str(self.port), "BOT_HOST": "127.0.0.1", **env},
        )

    async def wait_ready(self, session: aiohttp.ClientSession, path: str) -> None:
        url = f"{self.url}{path}"
        await until_ready(session, url, exited=self.exited, tail=self.log_path.read_text)

    def exited(self) -> bool:
        return self.process.poll() is not None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


def invoke_request(url: str, *, expect: str) -> Request:
    async def post(session: aiohttp.ClientSession, activity: Any) -> int:
        async with session.post(f"{url}/api/messages", json=activity) as response:
            body = await response.text()
            if response.status == 200 and expect not in body:
                return 299  # a 200 without the card we expect counts as a failure
            return response.status

    return post


async def park_runs(
    session: aiohttp.ClientSession, url: str, connector: FakeConnector, n: int
) -> list[dict[str, Any]]:
    """Start ``n`` runs, one personal chat each; return each card's "staging" invoke."""
    pending = list(range(n))

    async def sender() -> None:
        while pending:
            i = pending.pop()
            activity = message(connector.url, "deploy web", conversation=f"a:bench-{i}")
            async with session.post(f"{url}/api/messages", json=activity) as response:
                if response.status != 201:
                    raise SystemExit(f"starting a run: {response.status} {await response.text()}")

    await asyncio.gather(*(sender() for _ in range(16)))
    deadline = time.monotonic() + COLLECT_SECONDS
    while len(connector.cards()) < n:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(connector.cards())} of {n} cards were posted in time")
        await asyncio.sleep(0.2)
    invokes = []
    for call in connector.cards():
        staging = call.body["attachments"][0]["content"]["actions"][0]
        invokes.append(execute(connector.url, staging["data"], conversation=call.conversation))
    return invokes


@dataclass
class Measured:
    """One SDK's figures: the bot's answers, the bare pipeline's, and the runs resumed."""

    sdk: str
    answered: Phase
    baseline: Phase
    failures: int
    resumed: int


async def measure_sdk(sdk: str, n: int) -> Measured:
    timeout = aiohttp.ClientTimeout(total=60)
    connector = await FakeConnector().start()
    sessions: list[aiohttp.ClientSession] = []
    with tempfile.TemporaryDirectory(prefix=f"bench-teams-{sdk}-") as folder:
        bot = Process(
            Path(folder),
            ["-m", "bot"],
            {
                "DATABASE_URL": f"sqlite:///{folder}/bot.sqlite3",
                "BOT_DATA_DIR": f"{folder}/var",
                "BOT_CONSOLE": "false",
                "BOT_LOG_FORMAT": "json",
                "BOT_LOG_LEVEL": "WARNING",
                "BOT_TEAMS_SDK": sdk,
            },
        )
        bare = Process(Path(folder), ["bench/teams_invoke.py", "--bare"], {"BOT_TEAMS_SDK": sdk})
        try:
            async with aiohttp.ClientSession(timeout=timeout) as control:
                await bot.wait_ready(control, "/healthz")
                await bare.wait_ready(control, "/healthz")
                began = time.perf_counter()
                invokes = await park_runs(control, bot.url, connector, n)
                took = time.perf_counter() - began
                print(f"{sdk}: parked {n} runs on their first card in {took:.1f} s")
                for _ in range(CLIENTS):
                    sessions.append(
                        aiohttp.ClientSession(
                            connector=aiohttp.TCPConnector(limit=1), timeout=timeout
                        )
                    )
                fixed = [execute(connector.url, {"hitl": 1}) for _ in range(max(n, 5000))]
                bare_request = invoke_request(bare.url, expect='"ok"')
                warm = await measure("warm-up", sessions, fixed[: CLIENTS * 4], bare_request)
                baseline = await measure(
                    f"{sdk}: bare pipeline invoke", sessions, fixed, bare_request
                )
                answered = await measure(
                    f"{sdk}: Action.Execute answer",
                    sessions,
                    invokes,
                    invoke_request(bot.url, expect="Answered by"),
                )
                deadline = time.monotonic() + COLLECT_SECONDS
                while time.monotonic() < deadline:
                    if len(connector.cards()) >= 2 * n:
                        break
                    await asyncio.sleep(0.2)
                resumed = len(connector.cards()) - n
        finally:
            for session in sessions:
                await session.close()
            bot.stop()
            bare.stop()
            await connector.close()
    failures = warm.failures + baseline.failures + answered.failures
    return Measured(sdk, answered, baseline, failures, resumed)


async def run(n: int) -> int:
    results = [await measure_sdk(sdk, n) for sdk in SDKS]
    for result in results:
        print(result.answered.report())
        print(result.baseline.report())
        print(f"{result.sdk}: ratio answer/bare: {result.answered.ratios(result.baseline)}")
        print(f"{result.sdk}: {result.resumed} of {n} answered runs resumed and posted their card")
    botbuilder, agents = results
    print(f"answers, agents/botbuilder: {agents.answered.ratios(botbuilder.answered)}")
    print(f"bare pipelines, agents/botbuilder: {agents.baseline.ratios(botbuilder.baseline)}")
    failed = [r for r in results if r.failures or r.resumed != n]
    for result in failed:
        print(
            f"FAILED ({result.sdk}): {result.failures} bad responses, "
            f"{n - result.resumed} runs not resumed"
        )
    return 1 if failed else 0


def serve_bare() -> None:
    """The floor: BOT_TEAMS_SDK's pipeline (same seam as the bot) and a fixed invoke response."""
    from aiohttp import web

    from adapters.teams._sdk_choice import open_sdk
    from bot.app.settings import load_settings

    sdk = open_sdk(load_settings(BOT_CONSOLE=False).teams)

    async def fixed(_activity: dict[str, Any], _reference: dict[str, Any]) -> dict[str, Any]:
        return {
            "statusCode": 200,
            "type": "application/vnd.microsoft.card.adaptive",
            "value": FIXED_CARD,
        }

    async def messages(request: web.Request) -> web.Response:
        body = await request.json()
        activity = sdk.parse(body)
        authenticated = await sdk.authenticate(activity, "")
        return web.json_response(await sdk.process(authenticated, activity, body, fixed))

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/api/messages", messages)
    app.router.add_get("/healthz", healthz)
    web.run_app(app, host="127.0.0.1", port=int(os.environ["PORT"]), print=None)


def main() -> int:
    if sys.argv[1:] == ["--bare"]:
        serve_bare()
        return 0
    return run_from_argv(run, DEADLINE_SECONDS)


if __name__ == "__main__":
    sys.exit(main())
