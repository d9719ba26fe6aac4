"""The console's answer endpoint under 50 concurrent clients, against a real server.

Starts `python -m bot` on a free loopback port with SQLite in a temporary
folder, parks N demo runs on their first question ("deploy web" -> which
environment?), then 50 clients, each with its own keep-alive session,
answer them through `POST /api/answer`. `GET /healthz` under the same 50
clients is the baseline, measured first in the same run. Every response
must be 200; anything else is counted, printed, and fails the run.

Run: `make bench` or `.venv/bin/python bench/console.py [n]` (default 1000).
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

# This checkout's test helpers, whichever checkout's bot runs.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e._server import free_port, logged_process

# BENCH_ROOT runs another checkout's bot (e.g. the base of a branch) under this same load.
ROOT = Path(os.environ.get("BENCH_ROOT") or Path(__file__).resolve().parents[1])
CLIENTS = 50
# A conversation's feed lists its latest 50 runs; stay well inside that.
RUNS_PER_CONVERSATION = 25
DEADLINE_SECONDS = 600.0
READY_SECONDS = 30.0
COLLECT_SECONDS = 180.0

Request = Callable[[aiohttp.ClientSession, Any], Awaitable[int]]


@dataclass
class Phase:
    """Latencies (seconds) and statuses of one measured phase."""

    name: str
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    wall: float = 0.0

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall

    def percentile(self, p: int) -> float:
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[p - 1] * 1e3

    def ratios(self, baseline: Phase) -> str:
        """This phase against ``baseline``: its p50 and p99 latency, and its throughput."""
        return (
            f"p50 {self.percentile(50) / baseline.percentile(50):.1f}x, "
            f"p99 {self.percentile(99) / baseline.percentile(99):.1f}x, "
            f"throughput {self.rate / baseline.rate:.2f}x"
        )

    @property
    def failures(self) -> int:
        return sum(count for status, count in self.statuses.items() if status != 200)

    def report(self) -> str:
        line = (
            f"{self.name}: {len(self.latencies)} requests, {CLIENTS} clients, "
            f"{self.rate:,.0f} req/s, p50 {self.percentile(50):.1f} ms, "
            f"p99 {self.percentile(99):.1f} ms"
        )
        if self.failures:
            bad = ", ".join(f"{s}: {c}" for s, c in sorted(self.statuses.items()) if s != 200)
            line += f"  NON-200 RESPONSES: {self.failures} ({bad})"
        return line


class Server:
    """`python -m bot` in ``folder``; ``stop`` always leaves it dead."""

    def __init__(self, folder: Path, *, database_url: str | None = None, **more: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / "server.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "OPENAI_"))}
        env.update(
            PORT=str(self.port),
            BOT_HOST="127.0.0.1",
            DATABASE_URL=database_url or f"sqlite:///{folder / 'bot.sqlite3'}",
            BOT_DATA_DIR=str(folder / "var"),
            BOT_LOG_FORMAT="json",
            # Access lines per request would measure the log formatter, not the endpoint.
            BOT_LOG_LEVEL="WARNING",
            # Every answer comes from this one address: the per-address limit (60 a
            # minute by default) would refuse most of them and measure the limiter.
            BOT_CONSOLE_ANSWERS_PER_MINUTE="1000000",
            **more,
        )
        self.process = logged_process(
            [sys.executable, "-m", "bot"], self.log_path, env=env, cwd=ROOT
        )

    async def wait_ready(self, session: aiohttp.ClientSession) -> None:
        await until_ready(session, f"{self.url}/healthz", exited=self.exited, tail=self.tail)

    def exited(self) -> bool:
        return self.process.poll() is not None

    def cpu_seconds(self) -> float:
        """User + system CPU the server has used so far (Linux /proc); 0 elsewhere.

        On a shared machine wall-clock rates swing with the neighbours' load;
        CPU per request is the steadier figure to compare two versions by.
        """
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


async def park_runs(session: aiohttp.ClientSession, url: str, n: int) -> list[dict[str, Any]]:
    """Start ``n`` "deploy web" runs and return each one's first answer request."""
    conversations = [f"bench-{i // RUNS_PER_CONVERSATION}" for i in range(n)]
    pending = list(enumerate(conversations))

    async def sender() -> None:
        while pending:
            _, cid = pending.pop()
            async with session.post(
                f"{url}/api/conversations/{cid}/messages",
                json={"text": "deploy web"},
            ) as response:
                if response.status != 202:
                    raise SystemExit(f"starting a run: {response.status} {await response.text()}")

    await asyncio.gather(*(sender() for _ in range(16)))
    return await _collect(session, url, sorted(set(conversations)), n, "ask_user", _staging)


async def wait_resumed(session: aiohttp.ClientSession, url: str, n: int) -> None:
    """Every answered run must reach its approval question (the resume happened)."""
    conversations = sorted({f"bench-{i // RUNS_PER_CONVERSATION}" for i in range(n)})
    await _collect(session, url, conversations, n, "approval", lambda q: q)


async def _collect(
    session: aiohttp.ClientSession,
    url: str,
    conversations: Sequence[str],
    n: int,
    name: str,
    make: Callable[[dict[str, Any]], Any],
) -> list[Any]:
    found: dict[str, Any] = {}
    deadline = time.monotonic() + COLLECT_SECONDS
    while len(found) < n:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(found)} of {n} runs reached {name} in time")
        for cid in conversations:
            async with session.get(f"{url}/api/conversations/{cid}") as response:
                feed = await response.json()
            for run in feed["runs"]:
                for question in run["questions"]:
                    if question["name"] == name and question.get("token"):
                        found[question["interrupt_id"]] = make(question)
        if len(found) < n:
            await asyncio.sleep(0.2)
    return list(found.values())


def _staging(question: dict[str, Any]) -> dict[str, Any]:
    text = question["payload"]["questions"][0]["question"]
    return {"token": question["token"], "answer": {"answers": {text: "staging"}}}


async def until_ready(
    session: aiohttp.ClientSession,
    url: str,
    *,
    exited: Callable[[], bool] = lambda: False,
    tail: Callable[[], str] = lambda: "",
) -> None:
    """``url`` answers 200; past READY_SECONDS, or once the server has exited, the run stops
    with its log's tail."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline and not exited():
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return
        except (aiohttp.ClientError, TimeoutError):
            pass
        await asyncio.sleep(0.05)
    raise SystemExit(f"{url} did not become ready; log tail:\n{tail()}")


async def measure(
    name: str, sessions: Sequence[aiohttp.ClientSession], items: Sequence[Any], request: Request
) -> Phase:
    """Each client takes the next item until none is left; one latency per request."""
    phase = Phase(name)
    queue = list(reversed(items))

    async def client(session: aiohttp.ClientSession) -> None:
        while queue:
            item = queue.pop()
            began = time.perf_counter()
            status = await request(session, item)
            phase.latencies.append(time.perf_counter() - began)
            phase.statuses[status] += 1

    began = time.perf_counter()
    await asyncio.gather(*(client(session) for session in sessions))
    phase.wall = time.perf_counter() - began
    return phase


def answer_request(url: str) -> Request:
    async def post(session: aiohttp.ClientSession, body: Any) -> int:
        async with session.post(f"{url}/api/answer", json=body) as response:
            await response.read()
            return response.status

    return post


def healthz_request(url: str) -> Request:
    async def get(session: aiohttp.ClientSession, _item: Any) -> int:
        async with session.get(f"{url}/healthz") as response:
            await response.read()
            return response.status

    return get


async def run(n: int) -> int:
    timeout = aiohttp.ClientTimeout(total=60)
    with tempfile.TemporaryDirectory(prefix="bench-console-") as folder:
        server = Server(Path(folder))
        sessions: list[aiohttp.ClientSession] = []
        try:
            async with aiohttp.ClientSession(timeout=timeout) as control:
                await server.wait_ready(control)
                began = time.perf_counter()
                answers = await park_runs(control, server.url, n)
                took = time.perf_counter() - began
                print(f"parked {n} runs on their first question in {took:.1f} s")

                # One keep-alive connection per client, opened before anything is timed.
                for _ in range(CLIENTS):
                    connector = aiohttp.TCPConnector(limit=1)
                    sessions.append(aiohttp.ClientSession(connector=connector, timeout=timeout))
                warm = await measure(
                    "warm-up", sessions, range(CLIENTS * 4), healthz_request(server.url)
                )

                # More baseline requests than answers: each takes a few ms, and a
                # window of well under a second would mostly measure noise.
                cpu = server.cpu_seconds()
                health = await measure(
                    "GET /healthz", sessions, range(max(n, 5000)), healthz_request(server.url)
                )
                health_cpu = server.cpu_seconds() - cpu
                cpu = server.cpu_seconds()
                answer = await measure(
                    "answer endpoint", sessions, answers, answer_request(server.url)
                )
                answer_cpu = server.cpu_seconds() - cpu
                await wait_resumed(control, server.url, n)
        finally:
            for session in sessions:
                await session.close()
            server.stop()

    print(answer.report())
    print(health.report())
    print(f"ratio answer/healthz: {answer.ratios(health)}")
    print(
        f"server CPU per request: answer {answer_cpu / len(answer.latencies) * 1e3:.2f} ms "
        "(with the resumes it starts meanwhile), "
        f"healthz {health_cpu / len(health.latencies) * 1e3:.3f} ms"
    )
    print(f"all {n} answered runs resumed to their approval question")
    failures = warm.failures + health.failures + answer.failures
    if failures:
        print(f"FAILED: {failures} responses were not 200")
        return 1
    return 0


def run_from_argv(
    run: Callable[[int], Awaitable[int]], deadline_seconds: float = DEADLINE_SECONDS
) -> int:
    """The request benchmarks' command line: ``N`` requests (1000 unless given, at least one
    per client), the whole run bounded by ``deadline_seconds``; its exit code."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    if n < CLIENTS:
        raise SystemExit(f"n must be at least {CLIENTS} (one request per client)")
    return asyncio.run(asyncio.wait_for(run(n), deadline_seconds))


def main() -> int:
    return run_from_argv(run)


if __name__ == "__main__":
    sys.exit(main())
