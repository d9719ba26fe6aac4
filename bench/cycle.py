"""One in-process pause + answer + resume cycle, ours beside LangGraph's.

Ours is pause + redeem + resume (one ask_user, scripted model) on SQLite (a
real file, WAL) and on PostgreSQL when it is reachable (a fresh schema on
``BENCH_POSTGRES_URL``, default the local server). LangGraph's is its
interrupt + ``Command(resume=...)`` cycle on its own checkpointers for the
same two databases (``bench/_langgraph.py``, which needs the ``bench``
extra). Each side is opened once and warmed up; then, per backend, the
cycles run in rounds that alternate which side goes first, so that noise on
the machine falls on both alike. Prints median and p90 microseconds per
cycle for each, and how many times faster ours is by median, beside the
target for each backend. Without the bench extra LangGraph is skipped,
saying so, and ours is measured alone.
Run: `make bench` or `.venv/bin/python bench/cycle.py [iterations]`.
``bench/cycle.py --audit [iterations]`` instead measures our cycle with the
audit's hash chain on and off (its link trigger dropped), interleaved the same way;
``--encrypt [iterations]`` measures it with content encrypted at rest (a
``BOT_DATA_KEYS`` keyring) and without, the chain on for both, and then with
both the chain and encryption on against both off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import asyncpg

from bot.app.compose import build_agent
from bot.human import ASK_USER
from bot.human.tokens import TokenSigner, random_signing_key
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.providers.scripted import ScriptedProvider
from bot.service.answering.outcomes import Redeemed, Responder
from bot.service.delivering.surfaces import Conversation
from bot.service.running.runs import RunService
from bot.stores import data_keys, open_stores
from bot.stores._audit_chain import INSERT_AUDIT
from bot.testing import RecordingSurface, call, calls, question, say

WHO = Responder("bench:alice", "Alice")
POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
ANSWER = {"answers": {"Which environment?": "staging"}}
WARMUP = 50
ROUNDS = 5
AUDIT_ROUNDS = 20
# How many times faster than LangGraph's ours is meant to be, by median.
TARGETS = {"sqlite": 8.0, "postgres": 1.5}


def script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    if messages[-1].role == "tool":
        return say("deployed")
    return calls(call(ASK_USER, questions=[question("Which environment?", "staging", "prod")]))


class Runner(Protocol):
    async def run(self, iterations: int) -> list[float]: ...


class Cycles:
    """Our cycle on one open store; every cycle gets a conversation of its own."""

    def __init__(self, service: RunService, surface: RecordingSurface) -> None:
        self.stores = service.stores
        self.service = service
        self._surface = surface
        self._done = 0

    async def park(self, n: int, *, batch: int = 200) -> None:
        """``n`` runs started and left paused on their question, ``batch`` at a time: the
        lifecycle's own write path, as a mention per conversation opens one."""
        for first in range(0, n, batch):
            for _ in range(min(batch, n - first)):
                i = self._done
                self._done += 1
                where = Conversation(surface="bench", scope=f"T{i % 7}", key=f"C{i}")
                await self.service.start(where, WHO, "deploy web")
            await self.service.wait_idle()
            # The surface records every post; the store, not this list, is what is measured.
            self._surface.questions.clear()

    @property
    def next_number(self) -> int:
        """The number the next conversation is named by."""
        return self._done

    def number_from(self, first: int) -> None:
        """Number the next conversations from ``first`` on (``bench/scale.py``'s copies took
        the numbers before it)."""
        self._done = max(self._done, first)

    async def run(self, iterations: int) -> list[float]:
        """Microseconds per cycle, ``iterations`` of them."""
        service, surface = self.service, self._surface
        samples: list[float] = []
        for _ in range(iterations):
            i = self._done
            self._done += 1
            began = time.perf_counter()
            # A conversation per cycle, as a mention per thread is in Slack: one
            # long conversation would measure its growing history instead.
            where = Conversation(surface="bench", scope="T1", key=f"C{i}")
            run = await service.start(where, WHO, "deploy web")
            await service.wait_idle()
            # Its own question's: other questions' posts may land after it.
            token = next(
                surface.tokens[q.interrupt_id]
                for r, q in reversed(surface.questions)
                if run is not None and r.run_id == run.run_id
            )
            outcome = await service.redeem(token, ANSWER, responder=WHO, scope=where.scope)
            await service.wait_idle()
            elapsed = time.perf_counter() - began
            if not isinstance(outcome, Redeemed) or surface.outcomes[-1][1] != "deployed":
                raise SystemExit(f"cycle {i} did not complete: {outcome}")
            samples.append(elapsed * 1e6)
        return samples


@asynccontextmanager
async def cycles(url: str, *, also: Sequence[str] = ()) -> AsyncIterator[Cycles]:
    """Our cycle on the store ``url`` names, closed on exit; ``also``: more surfaces by name,
    each recording what it is sent as the bench surface does."""
    stores = await open_stores(url)
    signer = TokenSigner([random_signing_key("bench")])
    agent, capability = build_agent(
        provider=ScriptedProvider(script), stores=stores, signer=signer, clock=time.time
    )
    surface = RecordingSurface(name="bench")
    surfaces = {"bench": surface, **{name: RecordingSurface(name=name) for name in also}}
    service = RunService(agent=agent, capability=capability, stores=stores, surfaces=surfaces)
    try:
        yield Cycles(service, surface)
    finally:
        await stores.close()


async def measure(url: str, iterations: int, warmup: int = WARMUP) -> list[float]:
    """Microseconds per cycle on ``url``, after ``warmup`` cycles left out."""
    async with cycles(url) as ours:
        await ours.run(warmup)
        return await ours.run(iterations)


def summary(name: str, samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    median = statistics.median(ordered)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    print(f"{name:<18} n={len(ordered)}  median={median:8.0f} us  p90={p90:8.0f} us")
    return median, p90


@asynccontextmanager
async def postgres_schema() -> AsyncIterator[str | None]:
    """A fresh schema on ``POSTGRES_URL``, dropped afterwards: its URL, or None (saying so)
    if there is no server."""
    try:
        admin = await asyncpg.connect(POSTGRES_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        print(f"postgres: skipped, server unreachable ({type(error).__name__})")
        yield None
        return
    schema = f"bench_{secrets.token_hex(4)}"
    try:
        await admin.execute(f'CREATE SCHEMA "{schema}"')
        yield f"{POSTGRES_URL}?search_path={schema}"
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


@asynccontextmanager
async def postgres_cycles() -> AsyncIterator[tuple[str, Cycles] | None]:
    """Our cycle on a fresh schema, dropped afterwards, and its URL; None if there is no server."""
    async with postgres_schema() as url:
        if url is None:
            yield None
            return
        async with cycles(url) as ours:
            yield url, ours


COUNTED_CYCLES = 20
# The next transaction id: only a transaction that writes takes one, so the
# difference over some cycles counts their write transactions (commits).
_NEXT_XID = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint"


async def extra_lines(ours: Cycles, url: str) -> list[str]:
    """Commits (and, on PostgreSQL, round trips) per cycle, over a few cycles counted alone."""
    stores: Any = ours.stores
    db = stores._db
    if url.startswith("sqlite"):
        before = db.commits
        await ours.run(COUNTED_CYCLES)
        return [f"commits per cycle: {(db.commits - before) / COUNTED_CYCLES:.1f}"]
    probe = await asyncpg.connect(url)
    try:
        xid, trips = await probe.fetchval(_NEXT_XID), db.round_trips.count
        await ours.run(COUNTED_CYCLES)
        xids = await probe.fetchval(_NEXT_XID) - xid
    finally:
        await probe.close()
    return [
        f"commits per cycle: {xids / COUNTED_CYCLES:.1f} (write transactions, by the server)",
        f"round trips per cycle: {(db.round_trips.count - trips) / COUNTED_CYCLES:.1f}"
        " (every statement, BEGIN and COMMIT; by our pool)",
    ]


def rounds(iterations: int, count: int = ROUNDS) -> list[int]:
    """``iterations`` split into ``count`` near-equal rounds."""
    share, rest = divmod(iterations, count)
    return [share + (r < rest) for r in range(count)]


async def interleaved(
    ours: Runner, theirs: Runner, iterations: int, *, count: int = ROUNDS
) -> tuple[list[float], list[float]]:
    """Both sides warmed up, then run in ``count`` rounds, who goes first alternating."""
    await ours.run(WARMUP)
    await theirs.run(WARMUP)
    samples: dict[Runner, list[float]] = {ours: [], theirs: []}
    for r, size in enumerate(rounds(iterations, count)):
        for side in (ours, theirs) if r % 2 == 0 else (theirs, ours):
            samples[side] += await side.run(size)
    return samples[ours], samples[theirs]


async def compare(
    backend: str, saver: str, url: str, ours: Runner, theirs: Runner, iterations: int
) -> None:
    """Both cycles on ``backend``, interleaved, then their figures and ratio."""
    samples, langgraph = await interleaved(ours, theirs, iterations)
    ours_median, _ = summary(f"ours {backend}", samples)
    if isinstance(ours, Cycles):
        for line in await extra_lines(ours, url):
            print(line)
    theirs_median, _ = summary(f"langgraph {backend}", langgraph)
    print(
        f"langgraph {saver} / ours {backend}: ours is {theirs_median / ours_median:.2f}x faster"
        f" (target >= {TARGETS[backend]:g}x)"
    )


@asynccontextmanager
async def unchained(url: str) -> AsyncIterator[Cycles]:
    """Our cycle on ``url`` with the audit's events stored unchained: SQLite's store writes
    the plain insert, not the one that links; PostgreSQL's link trigger is dropped."""
    async with cycles(url) as ours:
        stores: Any = ours.stores
        if url.startswith("sqlite"):
            stores._db.audit_insert = INSERT_AUDIT
        else:
            await stores._db.execute("DROP TRIGGER audit_link ON audit")
        yield ours


async def audit_cost(backend: str, on_url: str, off_url: str, iterations: int) -> None:
    """The cycle with the audit chained and without, interleaved in one run."""
    async with cycles(on_url) as chained, unchained(off_url) as bare:
        # Short rounds: a two-sided difference of a few percent drowns in a shared
        # machine's swings unless each side meets them as often as the other.
        on, off = await interleaved(chained, bare, iterations, count=AUDIT_ROUNDS)
    on_median, _ = summary(f"chained {backend}", on)
    off_median, _ = summary(f"unchained {backend}", off)
    print(f"audit chain on {backend}: {100 * (on_median / off_median - 1):+.1f}% per cycle")


class Sealed:
    """A side that runs with ``BOT_DATA_KEYS`` set (the keyring is the process's), the
    other side of the pair running without."""

    def __init__(self, inner: Runner) -> None:
        self._inner = inner
        self._keys = data_keys.parse_data_keys(data_keys.random_data_key())

    async def run(self, iterations: int) -> list[float]:
        data_keys.use(self._keys)
        try:
            return await self._inner.run(iterations)
        finally:
            data_keys.use(None)


async def encrypt_cost(backend: str, urls: Sequence[str], iterations: int) -> None:
    """Encryption on and off (both chained), then chain and encryption on and both off."""
    sealed_url, plain_url, all_url, none_url = urls
    async with cycles(sealed_url) as sealed, cycles(plain_url) as plain:
        on, off = await interleaved(Sealed(sealed), plain, iterations, count=AUDIT_ROUNDS)
    on_median, _ = summary(f"encrypted {backend}", on)
    off_median, _ = summary(f"plaintext {backend}", off)
    print(f"encryption on {backend}: {100 * (on_median / off_median - 1):+.1f}% per cycle")
    async with cycles(all_url) as everything, unchained(none_url) as neither:
        on, off = await interleaved(Sealed(everything), neither, iterations, count=AUDIT_ROUNDS)
    on_median, _ = summary(f"both on {backend}", on)
    off_median, _ = summary(f"both off {backend}", off)
    print(
        f"audit chain and encryption on {backend}: {100 * (on_median / off_median - 1):+.1f}%"
        " per cycle (target <= +15%)"
    )


async def encrypt_main(iterations: int) -> None:
    print(f"pause + answer + resume, encrypted at rest and not, in {AUDIT_ROUNDS} rounds")
    names = ("sealed", "plain", "all", "none")
    with tempfile.TemporaryDirectory() as folder:
        urls = [f"sqlite:///{Path(folder) / name}.sqlite3" for name in names]
        await encrypt_cost("sqlite", urls, iterations)
    try:
        admin = await asyncpg.connect(POSTGRES_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        print(f"postgres: skipped, server unreachable ({type(error).__name__})")
        return
    schemas = [f"bench_{secrets.token_hex(4)}" for _ in names]
    try:
        for schema in schemas:
            await admin.execute(f'CREATE SCHEMA "{schema}"')
        urls = [f"{POSTGRES_URL}?search_path={schema}" for schema in schemas]
        await encrypt_cost("postgres", urls, iterations)
    finally:
        for schema in schemas:
            await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


async def audit_main(iterations: int) -> None:
    print(f"pause + answer + resume, the audit chained and not, in {AUDIT_ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as folder:
        on, off = (f"sqlite:///{Path(folder) / name}" for name in ("on.sqlite3", "off.sqlite3"))
        await audit_cost("sqlite", on, off, iterations)
    async with postgres_schema() as on_url, postgres_schema() as off_url:
        if on_url is not None and off_url is not None:
            await audit_cost("postgres", on_url, off_url, iterations)


async def alone(backend: str, url: str, ours: Cycles, iterations: int) -> None:
    """Our cycle on ``backend`` without a baseline beside it: warmed up, then measured."""
    await ours.run(WARMUP)
    summary(f"ours {backend}", await ours.run(iterations))
    for line in await extra_lines(ours, url):
        print(line)


def arguments() -> argparse.Namespace:
    """The command line: how many cycles, and which comparison (argparse's usage on a bad one)."""
    parser = argparse.ArgumentParser(description="pause + answer + resume, timed per cycle")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--audit", action="store_true", help="the audit's hash chain on and off")
    which.add_argument("--encrypt", action="store_true", help="encryption at rest on and off")
    parser.add_argument("iterations", nargs="?", type=int, default=500, help="cycles a side")
    return parser.parse_args()


async def main() -> None:
    given = arguments()
    iterations = given.iterations
    if given.audit:
        # What the tamper-evident audit costs a cycle (docs/audit.md); no baseline needed.
        await audit_main(iterations)
        return
    if given.encrypt:
        # What encryption at rest costs a cycle (docs/production.md).
        await encrypt_main(iterations)
        return
    # Imported here: bench/cycle_sql.py imports this module without the bench extra.
    try:
        import _langgraph
    except ModuleNotFoundError as missing:
        # Ours is still measured, so `make test` (no bench extra) runs this bench too.
        print(
            f"langgraph skipped: {missing.name} is not installed (`make bench` installs"
            " the bench extra); ours measured alone"
        )
        _langgraph = None

    print(f"pause + answer + resume in process, ours and LangGraph's in {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        async with cycles(url) as ours:
            if _langgraph is None:
                await alone("sqlite", url, ours, iterations)
            else:
                async with _langgraph.sqlite_cycles(Path(folder) / "langgraph.sqlite3") as theirs:
                    await compare("sqlite", "SqliteSaver", url, ours, theirs, iterations)
    async with AsyncExitStack() as stack:
        postgres = await stack.enter_async_context(postgres_cycles())
        if postgres is None:
            return
        url, ours_pg = postgres
        if _langgraph is None:
            await alone("postgres", url, ours_pg, iterations)
            return
        theirs_pg = await stack.enter_async_context(_langgraph.postgres_cycles(POSTGRES_URL))
        if theirs_pg is None:
            return
        await compare("postgres", "PostgresSaver", url, ours_pg, theirs_pg, iterations)


if __name__ == "__main__":
    asyncio.run(main())
