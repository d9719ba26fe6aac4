"""The agents API (``/v1``) beside awaithumans' server, both real processes, in one run.

Starts ``python -m bot`` (SQLite in a temporary folder, the console route,
one key in ``BOT_API_KEYS``) and ``awaithumans dev`` (its SQLite in the
same folder, its ``ADMIN_API_TOKEN`` for the agent, an operator who signs
in with a password to complete tasks), each on a free loopback port, and
measures for both:

1. create throughput, 50 concurrent clients: our ``POST /v1/questions``
   against its ``POST /api/tasks`` (the raw HTTP call its SDK makes), in
   rounds that alternate who goes first;
2. wake latency: an agent long-polls (ours ``GET /v1/questions/{id}?wait=``,
   its ``GET /api/tasks/{id}/poll?timeout=``), a person answers (ours the
   console's ``POST /api/answer``, its ``POST /api/tasks/{id}/complete``
   with the session cookie); the time from the answer's 200 to the
   long-poll's response. The answer comes at a random moment of the wait,
   so a check made once a second shows its real spread;
3. many concurrent long-polls on one process (open questions, each waited
   on once, until the wait ends): how many returned 200, how many died
   (its waiters with its SDK's read timeout, the wait plus 10 s), the
   health check's latency while they wait, and the server's memory per
   waiter (VmRSS from /proc before the polls and while they wait). Our
   ``/healthz`` reads the store; its ``/api/health`` answers without.

Prints each figure for both and ours / theirs, and each of our targets met
or missed. Without the bench extra awaithumans is skipped, saying so, and
ours is measured alone. The exit status is 1 if a waiter of ours went
unanswered or our log has an error: the figures are the machine's to judge.
Run: `make bench` or `.venv/bin/python bench/api.py [--waiters 500 ...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._served import bot_env  # noqa: E402 (needs ROOT on the path)
from bench.console import until_ready  # noqa: E402
from tests.e2e._server import free_port, logged_process  # noqa: E402

CLIENTS = 50
ROUNDS = 4
WAKE_LANES = 5
HEALTH_SAMPLES = 200
API_KEY = "bench-" + "k" * 40
ADMIN_TOKEN = "bench-admin-" + "t" * 40
OPERATOR = ("operator@example.com", "bench-password-1")
# Its SDK's read deadline is the poll's own timeout plus this.
SDK_POLL_BUFFER = 10
TARGET_CREATE = 5.0
TARGET_WAKE_P99_MS = 50.0
TARGET_HEALTH_P99_MS = 10.0
TARGET_KIB_PER_WAITER = 20.0


def quantile(values: list[float], q: float) -> float:
    """The q-quantile (0 < q < 1) of ``values``, in the same unit."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


class Side(Protocol):
    """One contender: its server's URL and process, and how an agent asks and waits."""

    name: str
    url: str
    pid: int
    health_path: str

    async def create(self, session: aiohttp.ClientSession, i: int) -> str: ...

    async def wait(
        self, session: aiohttp.ClientSession, qid: str, seconds: int
    ) -> tuple[int, str]: ...


class Process:
    """A server process of this bench, its log in ``folder``; ``stop`` always ends it."""

    def __init__(self, args: list[str], env: dict[str, str], folder: Path, name: str) -> None:
        self.log_path = folder / f"{name}.log"
        self.popen = logged_process(args, self.log_path, env=env, cwd=folder)

    async def ready(self, url: str) -> None:
        async with aiohttp.ClientSession() as session:
            await until_ready(session, url, exited=self.exited, tail=self.log_tail)

    def exited(self) -> bool:
        return self.popen.poll() is not None

    def log_tail(self) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=10)


class Refused(RuntimeError):
    """A response other than the one expected."""

    def __init__(self, response: aiohttp.ClientResponse, body: bytes) -> None:
        super().__init__(f"{response.method} {response.url.path}: {response.status} {body[:300]!r}")
        self.status = response.status


async def expect(response: aiohttp.ClientResponse, *statuses: int) -> Any:
    body = await response.read()
    if response.status not in statuses:
        raise Refused(response, body)
    return json.loads(body) if body else None


@dataclass
class _Served:
    """A contender's server: where it listens, its process, and the bearer token its API takes."""

    url: str
    pid: int
    name: str
    health_path: str
    bearer: str

    @property
    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.bearer}"}


@dataclass
class Ours(_Served):
    """The bridge: ``/v1`` with a key, answered on the console as its loopback operator."""

    name: str = "ours"
    health_path: str = "/healthz"
    bearer: str = API_KEY

    async def create(self, session: aiohttp.ClientSession, i: int, conversation: str = "") -> str:
        body = {
            "idempotency_key": f"bench-{i}",
            "kind": "approval",
            "payload": {"action": "deploy", "summary": f"Deploy web 1.{i} to prod", "risk": "high"},
            "route": {"surface": "console", "conversation": conversation or f"bench-{i % CLIENTS}"},
            "answerers": ["anyone"],
        }
        async with session.post(f"{self.url}/v1/questions", json=body, headers=self._auth) as r:
            return str((await expect(r, 201))["id"])

    async def wait(self, session: aiohttp.ClientSession, qid: str, seconds: int) -> tuple[int, str]:
        async with session.get(
            f"{self.url}/v1/questions/{qid}", params={"wait": str(seconds)}, headers=self._auth
        ) as response:
            body = await response.json()
            return response.status, str(body.get("status"))

    async def token(self, session: aiohttp.ClientSession, qid: str, conversation: str) -> str:
        """The question's token as the console page gets it, once the outbox has posted it."""
        for _ in range(1000):
            async with session.get(f"{self.url}/api/conversations/{conversation}") as response:
                feed = await expect(response, 200)
            for run in feed.get("runs", []):
                for question in run.get("questions", []):
                    if question["interrupt_id"] == qid and question.get("token"):
                        return str(question["token"])
            await asyncio.sleep(0.02)
        raise RuntimeError(f"question {qid} never reached the console")

    async def answer(self, session: aiohttp.ClientSession, token: str) -> None:
        body = {"token": token, "answer": {"decision": "approve", "comment": ""}}
        async with session.post(f"{self.url}/api/answer", json=body) as response:
            await expect(response, 200)


@dataclass
class Theirs(_Served):
    """awaithumans: tasks made with its admin token, completed by a signed-in operator."""

    name: str = "awaithumans"
    health_path: str = "/api/health"
    bearer: str = ADMIN_TOKEN

    async def create(self, session: aiohttp.ClientSession, i: int) -> str:
        # The body its SDK's await_human() posts, with a pydantic model's schemas.
        body = {
            "task": f"Deploy web 1.{i} to prod",
            "payload": {"action": "deploy", "summary": f"Deploy web 1.{i} to prod"},
            "payload_schema": {
                "type": "object",
                "properties": {"action": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["action", "summary"],
            },
            "response_schema": {
                "type": "object",
                "properties": {"approved": {"type": "boolean"}},
                "required": ["approved"],
            },
            "timeout_seconds": 86_400,
            "idempotency_key": f"bench-{i}",
        }
        async with session.post(f"{self.url}/api/tasks", json=body, headers=self._auth) as r:
            return str((await expect(r, 201))["id"])

    async def wait(self, session: aiohttp.ClientSession, qid: str, seconds: int) -> tuple[int, str]:
        timeout = aiohttp.ClientTimeout(total=None, sock_read=seconds + SDK_POLL_BUFFER)
        async with session.get(
            f"{self.url}/api/tasks/{qid}/poll",
            params={"timeout": str(seconds)},
            headers=self._auth,
            timeout=timeout,
        ) as response:
            body = await response.json()
            return response.status, str(body.get("status"))

    async def sign_in(self, session: aiohttp.ClientSession) -> None:
        email, password = OPERATOR
        async with session.post(
            f"{self.url}/api/auth/login", json={"email": email, "password": password}
        ) as response:
            await expect(response, 204)

    async def answer(self, session: aiohttp.ClientSession, qid: str) -> None:
        async with session.post(
            f"{self.url}/api/tasks/{qid}/complete", json={"response": {"approved": True}}
        ) as response:
            await expect(response, 200)


# ---------------------------------------------------------------- processes


def bot_process(folder: Path, port: int) -> Process:
    env = bot_env(port, f"sqlite:///{folder / 'bot.sqlite3'}", folder / "var", API_KEY)
    return Process([sys.executable, "-m", "bot"], env, folder, "bot")


def awaithumans_process(folder: Path, port: int) -> Process:
    home = folder / "awaithumans"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWAITHUMANS_")}
    env.update(
        {
            # Its dev server writes a discovery file into HOME and reads .env from its cwd.
            "HOME": str(home),
            "AWAITHUMANS_DB_PATH": str(home / "dev.db"),
            "AWAITHUMANS_PAYLOAD_KEY": secrets.token_urlsafe(32),
            "AWAITHUMANS_ADMIN_API_TOKEN": ADMIN_TOKEN,
            "AWAITHUMANS_LOG_LEVEL": "WARNING",
        }
    )
    cli = [sys.executable, "-m", "awaithumans.cli.main"]
    email, password = OPERATOR
    subprocess.run(  # noqa: S603 (its own CLI, installed by the bench extra)
        [*cli, "add-user", "--email", email, "--password", password, "--operator"],
        cwd=home,
        env=env,
        check=True,
        capture_output=True,
    )
    dev = ["dev", "--host", "127.0.0.1", "--port", str(port), "--log-level", "WARNING"]
    return Process([*cli, *dev, "--db-path", str(home / "dev.db")], env, home, "awaithumans")


# ---------------------------------------------------------------- 1. create throughput


@dataclass
class Creates:
    made: list[str]
    failed: Counter[str]  # refusals by status, or the client's error
    seconds: float


async def creates(side: Side, start: int, n: int, *, tries: int = 1) -> Creates:
    """``n`` creates by 50 concurrent clients (ids ``start``..), each tried up to ``tries``."""
    connector = aiohttp.TCPConnector(limit=CLIENTS)
    made: list[str] = []
    failed: Counter[str] = Counter()
    async with aiohttp.ClientSession(connector=connector) as session:
        numbers = iter(range(start, start + n))

        async def client() -> None:
            for i in numbers:
                for _ in range(tries):
                    try:
                        made.append(await side.create(session, i))
                        break
                    except Refused as refused:
                        failed[str(refused.status)] += 1
                    except aiohttp.ClientError as error:  # e.g. the server reset the connection
                        failed[type(error).__name__] += 1

        began = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(CLIENTS)))
        return Creates(made, failed, time.perf_counter() - began)


async def throughput(sides: list[Side], n: int) -> dict[str, Creates]:
    for side in sides:
        await creates(side, 0, CLIENTS * 2)  # warm-up
    done = {side.name: Creates([], Counter(), 0.0) for side in sides}
    size = -(-n // ROUNDS)
    for r in range(ROUNDS):
        for side in sides if r % 2 == 0 else list(reversed(sides)):
            result = await creates(side, 1_000 + r * size, size)
            pooled = done[side.name]
            pooled.made += result.made
            pooled.failed += result.failed
            pooled.seconds += result.seconds
    return done


# ---------------------------------------------------------------- 2. wake latency


@dataclass
class Wake:
    after_commit: float  # from the answer's 200 to the poll's response; < 0: the poll was first
    after_send: float  # from the answer's request to the poll's response


# Ask question ``i``: its id, and what the answer needs (our token, its task id).
Ask = Callable[[aiohttp.ClientSession, int], Awaitable[tuple[str, str]]]


async def wakes(
    side: Side, n: int, answer: Callable[[str], Awaitable[None]], ask: Ask
) -> list[Wake]:
    """``n`` questions, ``WAKE_LANES`` at a time: ask, long-poll, answer at a random moment."""
    connector = aiohttp.TCPConnector(limit=WAKE_LANES * 3)
    results: list[Wake] = []
    async with aiohttp.ClientSession(connector=connector) as session:
        numbers = iter(range(n))

        async def lane() -> None:
            for i in numbers:
                qid, ready = await ask(session, i)
                poll = asyncio.create_task(side.wait(session, qid, 30))
                # Anywhere within a second of the wait: a check once a second shows its spread.
                await asyncio.sleep(random.uniform(0.05, 1.05))
                if poll.done():
                    raise RuntimeError(f"{side.name}: the long-poll returned before the answer")
                sent = time.perf_counter()
                await answer(ready)
                committed = time.perf_counter()
                status, state = await poll
                woke = time.perf_counter()
                if status != 200 or state not in ("answered", "completed"):
                    raise RuntimeError(f"{side.name}: the poll ended {status} {state}")
                results.append(Wake(woke - committed, woke - sent))

        await asyncio.gather(*(lane() for _ in range(WAKE_LANES)))
    return results


async def our_wakes(ours: Ours, n: int) -> list[Wake]:
    answerer = aiohttp.ClientSession()

    async def ask(session: aiohttp.ClientSession, i: int) -> tuple[str, str]:
        conversation = f"wake-{i}"
        qid = await ours.create(session, 900_000 + i, conversation)
        return qid, await ours.token(session, qid, conversation)

    try:
        return await wakes(ours, n, lambda token: ours.answer(answerer, token), ask)
    finally:
        await answerer.close()


async def their_wakes(theirs: Theirs, n: int) -> list[Wake]:
    operator = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    await theirs.sign_in(operator)

    async def ask(session: aiohttp.ClientSession, i: int) -> tuple[str, str]:
        qid = await theirs.create(session, 900_000 + i)
        return qid, qid

    try:
        return await wakes(theirs, n, lambda qid: theirs.answer(operator, qid), ask)
    finally:
        await operator.close()


# ---------------------------------------------------------------- 3. concurrent long-polls


@dataclass
class Crowd:
    waiters: int
    statuses: Counter[str]
    held: list[float]  # seconds from each poll's request to its 200
    health_ms: list[float]
    still_waiting: int  # when the health samples were done
    rss_before: int
    rss_during: int
    ramp_seconds: float
    create_refusals: Counter[str]  # the creates that had to be tried again, by status


async def parked(pid: int, *, quiet_ticks: int = 2, most: float = 10.0) -> None:
    """Until the server's CPU goes quiet (its waiters are all parked), or ``most`` seconds."""
    deadline = time.monotonic() + most
    quiet = 0
    last = cpu_ticks(pid)
    while quiet < 3 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = cpu_ticks(pid)
        quiet = quiet + 1 if now - last <= quiet_ticks else 0
        last = now


async def crowd(side: Side, n: int, seconds: int) -> Crowd:
    """``n`` open questions, each long-polled at once for ``seconds``, on one session."""
    made = await creates(side, 2_000_000, n, tries=5)
    ids = made.made
    if len(ids) < n:
        raise RuntimeError(f"{side.name}: only {len(ids)} of {n} questions made ({made.failed})")
    await parked(side.pid)  # the creates' own after-work (the outbox posting them) done
    rss_before = rss_kib(side.pid)
    sent = 0
    all_sent = asyncio.Event()

    async def headers_sent(*_: Any) -> None:
        nonlocal sent
        sent += 1
        if sent == n:
            all_sent.set()

    trace = aiohttp.TraceConfig()
    trace.on_request_headers_sent.append(headers_sent)
    connector = aiohttp.TCPConnector(limit=n + 10)
    statuses: Counter[str] = Counter()
    held: list[float] = []
    returned = 0
    async with aiohttp.ClientSession(connector=connector, trace_configs=[trace]) as session:

        async def waiter(qid: str) -> None:
            nonlocal returned
            began = time.perf_counter()
            try:
                status, _ = await side.wait(session, qid, seconds)
                statuses[str(status)] += 1
                held.append(time.perf_counter() - began)
            except TimeoutError:
                statuses["read timeout"] += 1
            except aiohttp.ClientError as error:
                statuses[type(error).__name__] += 1
            returned += 1

        began = time.perf_counter()
        polls = [asyncio.create_task(waiter(qid)) for qid in ids]
        # Sent within the wait, or a minute on a loaded machine, whichever is longer.
        await asyncio.wait_for(all_sent.wait(), max(seconds, 60))
        await parked(side.pid, most=5.0)
        ramp = time.perf_counter() - began
        health = await health_samples(side)
        still_waiting = n - returned
        rss_during = rss_kib(side.pid)
        await asyncio.gather(*polls)
    return Crowd(
        n, statuses, held, health, still_waiting, rss_before, rss_during, ramp, made.failed
    )


async def health_samples(side: Side) -> list[float]:
    """Milliseconds per health check, one at a time on a connection of its own."""
    samples = []
    async with aiohttp.ClientSession() as session:
        for _ in range(HEALTH_SAMPLES):
            began = time.perf_counter()
            async with session.get(f"{side.url}{side.health_path}") as response:
                await response.read()
                ok = response.status == 200
            samples.append((time.perf_counter() - began) * 1000 if ok else float("inf"))
            await asyncio.sleep(0.005)
    return samples


# ---------------------------------------------------------------- report


def ms(values: list[float], q: float) -> float:
    return quantile(values, q) * 1000


def print_wakes(name: str, samples: list[Wake]) -> tuple[float, float]:
    commit = [max(0.0, s.after_commit) for s in samples]
    send = [s.after_send for s in samples]
    first = sum(s.after_commit < 0 for s in samples)
    print(
        f"  {name:<12} after the answer's 200: p50 {ms(commit, 0.5):7.1f} ms  p99"
        f" {ms(commit, 0.99):7.1f} ms  max {max(commit) * 1000:7.1f} ms"
        f"  ({first} of {len(samples)} polls answered before the answer's own 200: counted 0)"
    )
    print(
        f"  {'':<12} after the answer was sent: p50 {ms(send, 0.5):7.1f} ms  p99"
        f" {ms(send, 0.99):7.1f} ms"
    )
    return ms(commit, 0.5), ms(commit, 0.99)


def print_crowd(name: str, result: Crowd) -> None:
    ok = result.statuses.get("200", 0)
    others = ", ".join(f"{k}: {v}" for k, v in sorted(result.statuses.items()) if k != "200")
    health = result.health_ms
    per_waiter = per_waiter_kib(result)
    held = (
        f" after p50 {quantile(result.held, 0.5):.1f} s, max {max(result.held):.1f} s"
        if result.held
        else ""
    )
    print(
        f"  {name:<12} {result.waiters} waiters: {ok} returned 200{held}"
        f", {result.waiters - ok} did not ({others or 'none'})"
    )
    print(
        f"  {'':<12} all sent and parked {result.ramp_seconds:.1f} s after the first;"
        f" health check while {result.still_waiting} still waited: p50"
        f" {quantile(health, 0.5):.1f} ms  p99 {quantile(health, 0.99):.1f} ms"
        f"  max {max(health):.1f} ms (n={len(health)})"
    )
    if result.create_refusals:
        refused = ", ".join(f"{v} x {k}" for k, v in sorted(result.create_refusals.items()))
        print(f"  {'':<12} creating them, refused and tried again: {refused}")
    print(
        f"  {'':<12} RSS {result.rss_before / 1024:.1f} MiB before, {result.rss_during / 1024:.1f}"
        f" MiB while waiting: {per_waiter:.1f} KiB per waiter"
    )


def logged_errors(path: Path) -> int:
    """Lines our JSON log wrote at level error or critical."""
    count = 0
    for line in path.read_text(errors="replace").splitlines():
        try:
            level = json.loads(line).get("level")
        except ValueError:
            continue
        count += level in ("error", "critical")
    return count


def baseline_missing() -> str | None:
    """Why awaithumans cannot be measured here (the bench extra is absent), or None."""
    if shutil.which("awaithumans", path=str(Path(sys.executable).parent)) is None:
        return "awaithumans is not installed (`make bench` installs the bench extra)"
    return None


async def main(args: argparse.Namespace) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # One descriptor per long-poll in this process, and as many in the server's.
    wanted = max(args.waiters, args.their_waiters) + 1024
    if hard != resource.RLIM_INFINITY and hard < wanted:
        raise SystemExit(f"the open-files hard limit is {hard}; {wanted} are needed")
    # Raised before the servers start: they inherit it.
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    missing = baseline_missing()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        ports = free_port(), free_port()
        processes = [bot_process(folder, ports[0])]
        if missing is None:
            processes.append(awaithumans_process(folder, ports[1]))
        try:
            await processes[0].ready(f"http://127.0.0.1:{ports[0]}/healthz")
            ours = Ours(f"http://127.0.0.1:{ports[0]}", processes[0].popen.pid)
            theirs = None
            if missing is None:
                await processes[1].ready(f"http://127.0.0.1:{ports[1]}/api/health")
                theirs = Theirs(f"http://127.0.0.1:{ports[1]}", processes[1].popen.pid)
            else:
                print(f"awaithumans skipped: {missing}; ours measured alone")
            held = await run_all(args, ours, theirs)
            errors = logged_errors(processes[0].log_path)
            print(f"our log: {errors} lines at level error or worse")
        except BaseException:
            for process in processes:
                print(f"--- {process.log_path.name}\n{process.log_tail()}", file=sys.stderr)
            raise
        finally:
            for process in processes:
                process.stop()
    return 0 if held and errors == 0 else 1


async def run_all(args: argparse.Namespace, ours: Ours, theirs: Theirs | None) -> bool:
    """Every measure, ours beside theirs where there is a baseline; True if ours answered
    every waiter."""
    sides: list[Side] = [ours] if theirs is None else [theirs, ours]
    beside = "" if theirs is None else " beside awaithumans dev (SQLite)"
    print(f"agents API: ours (python -m bot, SQLite){beside}, one machine")
    results = await throughput(sides, args.creates)
    print(f"1. create, {CLIENTS} concurrent clients, {args.creates} each in {ROUNDS} rounds")
    rates = {}
    for name, result in results.items():
        rates[name] = len(result.made) / result.seconds
        refused = ", ".join(f"{v} x {k}" for k, v in sorted(result.failed.items())) or "none"
        print(f"  {name:<12} {rates[name]:8.0f} questions/s (refused: {refused})")
    if theirs is not None:
        ratio = rates["ours"] / rates["awaithumans"]
        print(f"  ours / awaithumans: {ratio:.2f}x (target >= {TARGET_CREATE:g}x)")

    print(f"2. wake latency, {args.wake} questions, {WAKE_LANES} at a time")
    our_p50, our_p99 = print_wakes("ours", await our_wakes(ours, args.wake))
    if theirs is not None:
        their_p50, their_p99 = print_wakes("awaithumans", await their_wakes(theirs, args.wake))
        print(
            f"  ours / awaithumans: p50 {our_p50 / their_p50:.3f}x, p99 {our_p99 / their_p99:.3f}x"
        )
    print(f"  ours: wake p99 {our_p99:.1f} ms (target <= {TARGET_WAKE_P99_MS:g} ms)")

    print(f"3. concurrent long-polls on one process, each held {args.wait} s")
    mine = await crowd(ours, args.waiters, args.wait)
    print_crowd("ours", mine)
    held = print_targets(mine)
    if theirs is None:
        return held
    try:
        theirs_result = await crowd(theirs, args.their_waiters, args.wait)
    except (RuntimeError, aiohttp.ClientError, TimeoutError) as error:
        # Its server may fall over under the crowd; ours is measured already.
        print(f"  awaithumans  did not survive {args.their_waiters} waiters: {error}")
        return held
    print_crowd("awaithumans", theirs_result)
    per = [per_waiter_kib(r) for r in (mine, theirs_result)]
    health = [quantile(r.health_ms, 0.99) for r in (mine, theirs_result)]
    print(
        f"  ours / awaithumans: memory per waiter {per[0] / per[1]:.2f}x,"
        f" health check p99 {health[0] / health[1]:.3f}x"
        if per[1] > 0
        else f"  ours / awaithumans: health check p99 {health[0] / health[1]:.3f}x"
    )
    return held


def per_waiter_kib(result: Crowd) -> float:
    return (result.rss_during - result.rss_before) / result.waiters


def print_targets(result: Crowd) -> bool:
    """Our crowd against its targets, one line each; True if every waiter was answered
    (the figures are the machine's, the answers are the bridge's)."""
    answered = result.statuses.get("200", 0) == result.waiters
    health = quantile(result.health_ms, 0.99)
    per = per_waiter_kib(result)
    health_line = f"/healthz p99 {health:.1f} ms (at most {TARGET_HEALTH_P99_MS:g})"
    per_line = f"{per:.1f} KiB per waiter (at most {TARGET_KIB_PER_WAITER:g})"
    checks = [
        (answered, f"all {result.waiters} answered"),
        (health <= TARGET_HEALTH_P99_MS, health_line),
        (per <= TARGET_KIB_PER_WAITER, per_line),
    ]
    for met, what in checks:
        print(f"  ours target {'met' if met else 'MISSED'}: {what}")
    return answered


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--creates", type=int, default=1000, help="creates per side (1.)")
    parser.add_argument("--wake", type=int, default=50, help="questions per side (2.)")
    parser.add_argument("--waiters", type=int, default=10_000, help="our long-polls (3.)")
    parser.add_argument("--their-waiters", type=int, default=1000, help="its long-polls (3.)")
    parser.add_argument(
        "--wait",
        type=int,
        default=30,
        choices=range(1, 31),
        metavar="1-30",
        help="seconds each long-poll holds (3.)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
