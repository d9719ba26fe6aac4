"""Redemptions through the HTTP answer path on PostgreSQL, with one and with two replicas.

For each configuration: a fresh schema, `python -m bot` replicas on free
loopback ports sharing it (explicit BOT_SIGNING_KEYS, as production needs),
N demo runs parked on their first question, then 50 clients with keep-alive
sessions answer them through `POST /api/answer`, client i talking to
replica i mod R. Each answer is a real redemption: verify the token, spend
it, close the question, hand the resume to a worker. Prints redemptions/s
and p50/p99 latency; every answer must be 200 and every answered run must
reach its next question, or the run fails.

Run: `.venv/bin/python bench/redeem.py [n]` (default 1000). The server is
`BENCH_POSTGRES_URL` (default the local one). On a small machine the
replicas, PostgreSQL and this load generator share the same cores, so a
second replica adds contention as much as capacity.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from console import (
    CLIENTS,
    Phase,
    Server,
    answer_request,
    measure,
    park_runs,
    run_from_argv,
    wait_resumed,
)

BASE_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
KEYS = "bench:" + "b" * 48


def replica(folder: Path, database_url: str) -> Server:
    """One `python -m bot` on the shared schema, every replica with the same keys."""
    pool = (
        {"BOT_PG_POOL_SIZE": os.environ["BENCH_PG_POOL_SIZE"]}
        if "BENCH_PG_POOL_SIZE" in os.environ
        else {}
    )
    return Server(folder, database_url=database_url, BOT_SIGNING_KEYS=KEYS, **pool)


async def measure_replicas(
    name: str, clients: Sequence[tuple[aiohttp.ClientSession, str]], items: Sequence[Any]
) -> Phase:
    """Each client answers the next parked question, at its own replica, until none is left."""
    posts = {session: answer_request(url) for session, url in clients}

    async def post(session: aiohttp.ClientSession, item: Any) -> int:
        return await posts[session](session, item)

    return await measure(name, list(posts), items, post)


async def one_configuration(n: int, replicas: int) -> Phase:
    schema = f"bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(BASE_URL)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    timeout = aiohttp.ClientTimeout(total=60)
    sessions: list[aiohttp.ClientSession] = []
    servers: list[Server] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-redeem-") as folder:
            url = f"{BASE_URL}?search_path={schema}"
            async with aiohttp.ClientSession(timeout=timeout) as control:
                # One after the other: the first creates the schema's tables.
                for i in range(replicas):
                    servers.append(replica(Path(folder) / f"r{i}", url))
                    await servers[-1].wait_ready(control)
                first = servers[0].url
                answers = await park_runs(control, first, n)
                for _ in range(CLIENTS):
                    connector = aiohttp.TCPConnector(limit=1)
                    sessions.append(aiohttp.ClientSession(connector=connector, timeout=timeout))
                clients = [(s, servers[i % replicas].url) for i, s in enumerate(sessions)]
                # Warm every connection (and each replica's pool) before timing.
                for session, server_url in clients:
                    async with session.get(f"{server_url}/healthz") as response:
                        await response.read()
                label = f"{replicas} replica{'s' if replicas > 1 else ''}"
                phase = await measure_replicas(label, clients, answers)
                await wait_resumed(control, first, n)
    finally:
        for session in sessions:
            await session.close()
        for server in servers:
            server.stop()
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()
    return phase


async def run(n: int) -> int:
    phases = [await one_configuration(n, replicas) for replicas in (1, 2)]
    print(f"redemptions through POST /api/answer on PostgreSQL, {n} tokens, {CLIENTS} clients")
    for phase in phases:
        line = (
            f"{phase.name:<10} {phase.rate:8,.0f} redemptions/s  "
            f"p50 {phase.percentile(50):6.1f} ms  p99 {phase.percentile(99):6.1f} ms"
        )
        if phase.failures:
            line += f"  NON-200: {phase.failures}"
        print(line)
    print(f"every answered run resumed to its next question ({n} per configuration)")
    return 1 if any(phase.failures for phase in phases) else 0


def main() -> int:
    return run_from_argv(run)


if __name__ == "__main__":
    sys.exit(main())
