"""One in-process pause + redeem + resume cycle (one ask_user, scripted model).

Prints median and p90 microseconds per cycle on SQLite (a real file, WAL),
on PostgreSQL when it is reachable (a fresh schema on ``BENCH_POSTGRES_URL``,
default the local server), and on the memory store, which is the baseline
the ratios are against.
Run: `make bench` or `.venv/bin/python bench/cycle.py [iterations]`.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import asyncpg

from bot.compose import build_agent
from bot.human import ASK_USER
from bot.human.tokens import TokenSigner, random_signing_key
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.outcomes import Redeemed, Responder
from bot.providers.scripted import ScriptedProvider
from bot.service.runs import RunService
from bot.stores import open_stores
from bot.surfaces import Conversation
from bot.testing import RecordingSurface, call, calls, question, say

WHO = Responder("bench:alice", "Alice")
POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
ANSWER = {"answers": {"Which environment?": "staging"}}


def script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    if messages[-1].role == "tool":
        return say("deployed")
    return calls(call(ASK_USER, questions=[question("Which environment?", "staging", "prod")]))


async def measure(url: str, iterations: int, warmup: int = 50) -> list[float]:
    stores = await open_stores(url)
    signer = TokenSigner([random_signing_key("bench")])
    agent, capability = build_agent(
        provider=ScriptedProvider(script), stores=stores, signer=signer, clock=time.time
    )
    surface = RecordingSurface(name="bench")
    service = RunService(
        agent=agent, capability=capability, stores=stores, surfaces={"bench": surface}
    )
    samples: list[float] = []
    try:
        for i in range(warmup + iterations):
            began = time.perf_counter()
            # A conversation per cycle, as a mention per thread is in Slack: one
            # long conversation would measure its growing history instead.
            where = Conversation(surface="bench", scope="T1", key=f"C{i}")
            await service.start(where, WHO, "deploy web")
            await service.wait_idle()
            outcome = await service.redeem(
                surface.last_token, ANSWER, responder=WHO, scope=where.scope
            )
            await service.wait_idle()
            elapsed = time.perf_counter() - began
            if not isinstance(outcome, Redeemed) or surface.outcomes[-1][1] != "deployed":
                raise SystemExit(f"cycle {i} did not complete: {outcome}")
            if i >= warmup:
                samples.append(elapsed * 1e6)
    finally:
        await stores.close()
    return samples


def summary(name: str, samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    median = statistics.median(ordered)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    print(f"{name:<8} n={len(ordered)}  median={median:8.0f} us  p90={p90:8.0f} us")
    return median, p90


async def measure_postgres(iterations: int) -> list[float] | None:
    """The cycle on a fresh schema, dropped afterwards; None if there is no server."""
    try:
        admin = await asyncpg.connect(POSTGRES_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        print(f"postgres: skipped, server unreachable ({type(error).__name__})")
        return None
    schema = f"bench_{secrets.token_hex(4)}"
    try:
        await admin.execute(f'CREATE SCHEMA "{schema}"')
        return await measure(f"{POSTGRES_URL}?search_path={schema}", iterations)
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


async def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with tempfile.TemporaryDirectory() as folder:
        sqlite = await measure(f"sqlite:///{Path(folder) / 'bench.sqlite3'}", iterations)
    postgres = await measure_postgres(iterations)
    memory = await measure("memory://", iterations)
    print("pause + redeem + resume, one ask_user, scripted model, in process")
    sqlite_median, _ = summary("sqlite", sqlite)
    postgres_median = summary("postgres", postgres)[0] if postgres else None
    memory_median, _ = summary("memory", memory)
    print(f"ratio sqlite/memory median = {sqlite_median / memory_median:.2f}x")
    if postgres_median is not None:
        print(f"ratio postgres/memory median = {postgres_median / memory_median:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
