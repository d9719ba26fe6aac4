"""LangGraph's interrupt + resume cycle, the baseline ``bench/cycle.py`` compares against.

A two-node StateGraph: ``ask`` calls ``interrupt`` with the question and
keeps the answer in the state, then ``act`` writes the final text. One cycle,
on a fresh thread, is ``ainvoke(initial)``, which stops at the interrupt, then
``ainvoke(Command(resume=answer))``, which completes; the final state is
checked. The checkpointers are LangGraph's async savers with their default
durability: ``AsyncSqliteSaver`` on a real file (WAL, as its ``setup`` sets,
and ``synchronous=NORMAL``, as our store runs SQLite) and
``AsyncPostgresSaver`` on a fresh schema of ``BENCH_POSTGRES_URL``, dropped
afterwards. Needs the ``bench`` extra (``make bench`` installs it).
Run: `make bench` (through ``bench/cycle.py``).
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt
from psycopg import sql
from psycopg.conninfo import make_conninfo

QUESTION = {
    "question": "Which environment?",
    "options": ["staging", "prod"],
}
ANSWER = {"answers": {"Which environment?": "staging"}}
POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


class State(TypedDict, total=False):
    request: str
    environment: str
    result: str


def ask(state: State) -> State:
    answer: dict[str, Any] = interrupt(QUESTION)
    return {"environment": answer["answers"]["Which environment?"]}


def act(state: State) -> State:
    return {"result": "deployed"}


def build_graph(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_node("act", act)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "act")
    builder.add_edge("act", END)
    return builder.compile(checkpointer=saver)


class Cycles:
    """The cycle on one compiled graph; every cycle gets a thread of its own."""

    def __init__(self, graph: CompiledStateGraph[Any]) -> None:
        self._graph = graph
        self._done = 0

    async def run(self, iterations: int) -> list[float]:
        """Microseconds per cycle, ``iterations`` of them."""
        samples: list[float] = []
        for _ in range(iterations):
            i = self._done
            self._done += 1
            config: Any = {"configurable": {"thread_id": f"T{i}"}}
            began = time.perf_counter()
            paused = await self._graph.ainvoke({"request": "deploy web"}, config, version="v2")
            done = await self._graph.ainvoke(Command(resume=ANSWER), config, version="v2")
            elapsed = time.perf_counter() - began
            asked = [pause.value for pause in paused.interrupts]
            if asked != [QUESTION] or done.interrupts or done.value.get("result") != "deployed":
                raise SystemExit(f"langgraph cycle {i} did not complete: {paused} then {done}")
            if done.value.get("environment") != "staging":
                raise SystemExit(f"langgraph cycle {i} lost the answer: {done}")
            samples.append(elapsed * 1e6)
        return samples


@asynccontextmanager
async def sqlite_cycles(path: Path) -> AsyncIterator[Cycles]:
    """Cycles on an ``AsyncSqliteSaver`` over the file ``path``."""
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        await saver.conn.execute("PRAGMA synchronous = NORMAL")
        yield Cycles(build_graph(saver))


@asynccontextmanager
async def postgres_cycles(url: str = POSTGRES_URL) -> AsyncIterator[Cycles | None]:
    """Cycles on an ``AsyncPostgresSaver`` in a fresh schema; None if there is no server."""
    try:
        admin = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        print(f"langgraph postgres: skipped, server unreachable ({type(error).__name__})")
        yield None
        return
    schema = f"bench_lg_{secrets.token_hex(4)}"
    try:
        await admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conninfo = make_conninfo(url, options=f"-csearch_path={schema}")
        async with AsyncPostgresSaver.from_conn_string(conninfo) as saver:
            await saver.setup()
            yield Cycles(build_graph(saver))
    finally:
        await admin.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )
        await admin.close()


async def measure_sqlite(iterations: int, warmup: int = 50) -> list[float]:
    """Microseconds per cycle on a SQLite file in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        async with sqlite_cycles(Path(folder) / "langgraph.sqlite3") as cycles:
            await cycles.run(warmup)
            return await cycles.run(iterations)


async def measure_postgres(
    iterations: int, warmup: int = 50, url: str = POSTGRES_URL
) -> list[float] | None:
    """Microseconds per cycle on a fresh schema of ``url``; None if there is no server."""
    async with postgres_cycles(url) as cycles:
        if cycles is None:
            return None
        await cycles.run(warmup)
        return await cycles.run(iterations)
