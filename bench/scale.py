"""How the bridge's own work grows with what is open: 1,000 open questions, then 10x, to ``--max``.

On SQLite (a temporary file) and on PostgreSQL (a fresh schema on
``BENCH_POSTGRES_URL``, default the local server; skipped, saying so, when
it is unreachable), the first 1,000 open questions are asked through the
lifecycle's own write paths, spread over seven scopes: half a chat agent's
(``RunService.start`` of a run that asks and stays paused, in batches;
``bench/cycle.py``'s ``Cycles.park``), half ``/v1``'s (``Lifecycle.ask_remote``
on the console route, the deliverer kicked as ``/v1``'s create does):
approvals, asks and forms in turn, with reminders, escalation steps, a quorum
or no policy in turn, expiring over a week. Each later size is grown by
copies of those 1,000 (``bench/_copies.py``), taken once every post is made:
every row the lifecycle wrote for each (run, question, checkpoint, outbox
rows, audit events, ``/v1`` request) with fresh identifiers of the same shape
and its times moved on by the template's age, inserted in batches through the
store's own triggers (the audit chain, the counters). Not the lifecycle's
Python, which would take most of an hour per backend to reach a million:
``--lifecycle`` grows every size through it instead. On a PostgreSQL server
that runs without autovacuum, each size is vacuumed once grown, as autovacuum
would, and checkpointed, so the growth's dirty pages are not written under the timed
operations; SQLite's write-ahead log is checkpointed, as the store does as it goes.
At each size, each operation runs ``--samples`` times as the server calls it,
its setup untimed, and its median (p50) is kept:

- ``ask + answer + resume``: one whole cycle (``bench/cycle.py``'s);
- ``pending first page``: the admin list's first 20 (``AdminStore.pending``);
- ``sweep, nothing due`` and ``sweep, 100 due``: the sweeper's pass
  (``RunService.sweep``), with none overdue, and with 100 questions just
  overdue, which it closes;
- ``reminder pass, nothing due`` and ``reminder pass, 100 due``: the pass over
  reminders and escalation (``Nudges.sweep``), with none due, and with 100
  asked an hour ago, which it nudges (cancelled afterwards, untimed);
- ``deliverer claim``: one claim of due posts (``Outbox.claim``);
- ``/v1 create`` and ``/v1 list page``: through a ``python -m bot`` server
  started on the grown store with the key the ``/v1`` half was asked under
  (``bench/_served.py``), and that process's RSS once they are done
  (``--no-server`` leaves these out).

Then one line per backend and operation,
``<backend> <operation>: p50 at <smallest> = X ms, at <largest> = Y ms (x<ratio>)``,
the server's RSS at the smallest and largest size, the bytes on disk per open
question at the largest size, and last
``scale: worst ratio <r> (<backend> <operation>)``. Not measured here yet:
questions posted on several routes.
Run: `.venv/bin/python bench/scale.py [--max 1000000] [--samples 20]`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import _served  # noqa: E402 (ROOT on the path)
from bench._copies import PostgresCopier, SqliteCopier, Template  # noqa: E402
from bench._served import KEY_ID  # noqa: E402
from bench.cycle import WHO, Cycles, cycles, postgres_schema  # noqa: E402
from bot.contract.payloads import payload_of  # noqa: E402
from bot.questions import quorum  # noqa: E402
from bot.questions.records import (  # noqa: E402
    ApiRequest,
    PendingFilter,
    Question,
    RunRecord,
    RunStatus,
)

SMALLEST = 1_000
YEAR = 365 * 86_400.0

Operation = Callable[[], Awaitable[float]]
Copier = SqliteCopier | PostgresCopier
# Where the /v1 half's questions are posted: a route /v1 takes (its list shows them), a
# surface that records what it is sent in this process, as the bench surface does.
API_SURFACE = "console"
# The server process's resident memory at each size (MiB; bench/_served.py).
RSS = "server RSS"
# Copies inserted per transaction.
COPY_BATCH = 10_000
# The numbered identifiers of the /v1 half's questions (``Mix``), one number each.
MIX_STEMS = ("run_bench_", "int_bench_", "api_bench_", "bench-", "V")


def sizes(most: int) -> list[int]:
    """1,000 and each tenfold up to ``most``, and ``most`` itself last."""
    grown = [SMALLEST]
    while grown[-1] * 10 <= most:
        grown.append(grown[-1] * 10)
    if most > grown[-1]:
        grown.append(most)
    return grown


# The /v1 half of the mix: kinds, policies (reminders, escalation, a quorum, none) and
# expiries spread over a week, in turn.
KINDS = ("approval", "ask_user", "form")
# What each kind asks, as /v1 would store it: parsed into the typed payload the
# lifecycle writes, so the rows are the lifecycle's own.
PAYLOADS: dict[str, dict[str, Any]] = {
    "approval": {
        "action": "deploy",
        "summary": "Deploy web to production?",
        "arguments": {"service": "web", "environment": "production"},
        "risk": "high",
    },
    "ask_user": {
        "questions": [
            {
                "question": "Which environment?",
                "options": [{"label": "staging"}, {"label": "production"}],
            }
        ]
    },
    "form": {
        "title": "Deploy details",
        "schema": {
            "type": "object",
            "properties": {"replicas": {"type": "integer", "minimum": 1}},
            "required": ["replicas"],
        },
    },
}
REMIND = {"remind_after_seconds": 3600, "max_reminders": 3}
ESCALATE = {
    "escalate": [
        {"after_seconds": 3600, "answerers": ["bench:bob"]},
        {"after_seconds": 8 * 3600, "answerers": ["group:oncall"]},
    ]
}
POLICIES: tuple[dict[str, Any] | None, ...] = (REMIND, ESCALATE, {"quorum": 2}, None)
DAY = 86_400.0


class Mix:
    """Questions asked through ``/v1``'s write path (``Lifecycle.ask_remote``), each a run of
    its own in a conversation of its own, spread over seven scopes."""

    def __init__(self, ours: Cycles) -> None:
        self._service = ours.service
        self._asked = 0

    @property
    def next_number(self) -> int:
        """The number the next question asked is named by."""
        return self._asked

    def number_from(self, first: int) -> None:
        """Number the next questions from ``first`` on (copies took the numbers before it)."""
        self._asked = max(self._asked, first)

    async def ask(
        self,
        n: int,
        *,
        issued_at: float,
        expires_in: Callable[[int], float],
        policy: Callable[[int], dict[str, Any] | None],
        batch: int = 200,
    ) -> list[str]:
        """``n`` questions asked at ``issued_at``; their interrupt ids."""
        ids = []
        for first in range(0, n, batch):
            for _ in range(min(batch, n - first)):
                i = self._asked
                self._asked += 1
                ids.append(await self._ask_one(i, issued_at, expires_in(i), policy(i)))
            await self._service.wait_idle()
        return ids

    async def _ask_one(
        self, i: int, issued_at: float, expires_in: float, policy: dict[str, Any] | None
    ) -> str:
        kind = KINDS[i % len(KINDS)]
        where = {"surface": API_SURFACE, "scope": f"T{i % 7}", "key": f"V{i}", "thread": ""}
        run = RunRecord(
            run_id=f"run_bench_{i}",
            scope=where["scope"],
            surface=API_SURFACE,
            requester="api:bench",
            text="deploy web",
            created_at=issued_at,
            updated_at=issued_at,
            conversation=where,
            status=RunStatus.REMOTE,
        )
        question = Question(
            interrupt_id=f"int_bench_{i}",
            run_id=run.run_id,
            scope=run.scope,
            name=kind,
            tool_call_id=f"api_bench_{i}",
            checkpoint_id="",
            payload=payload_of(kind, PAYLOADS[kind]),
            issued_at=issued_at,
            expires_at=issued_at + expires_in,
            answerers=("bench:alice", "bench:bob"),
            policy=quorum.stored_policy(policy),
        )
        api = ApiRequest(
            interrupt_id=question.interrupt_id,
            key_name="bench",
            # The server's key's (``bench/_served.py``): its /v1 list pages these questions.
            key_id=KEY_ID,
            idempotency_key=f"bench-{i}",
            body_hash="bench",
            kind=kind,
            created_at=issued_at,
        )
        if await self._service.questions.ask_remote(run, question, api) is None:
            raise SystemExit(f"question {i} was not asked")
        # As /v1's create does: its post is delivered now, not at the deliverer's next pass.
        self._service.deliverer.kick()
        return question.interrupt_id


def spread(i: int) -> float:
    """Expiries over a week: a day to seven, and some hours."""
    return DAY * (1 + i % 7) + 3600.0 * (i % 24)


def policy_in_turn(i: int) -> dict[str, Any] | None:
    return POLICIES[i % len(POLICIES)]


async def grow_mix(ours: Cycles, mix: Mix, n: int) -> None:
    """``n`` more open questions: half a chat agent's (no policy), half ``/v1``'s mix."""
    await ours.park(n // 2)
    await mix.ask(n - n // 2, issued_at=time.time(), expires_in=spread, policy=policy_in_turn)


def operations(ours: Cycles, mix: Mix) -> dict[str, Operation]:
    """Each operation: its setup untimed, then the call timed; the milliseconds it took."""
    stores: Any = ours.stores
    service = ours.service

    async def timed(call: Awaitable[Any]) -> tuple[float, Any]:
        began = time.perf_counter()
        result = await call
        return (time.perf_counter() - began) * 1000, result

    async def cycle() -> float:
        return (await timed(ours.run(1)))[0]

    async def pending() -> float:
        return (await timed(stores.admin.pending(where=PendingFilter(), limit=20)))[0]

    async def nothing_due() -> float:
        taken, closed = await timed(service.sweep(limit=100))
        if closed:
            raise SystemExit(f"{closed} questions expired in a sweep that had none due")
        return taken

    async def hundred_due() -> float:
        # 100 questions a day old whose hour ran out a moment ago: the sweep closes them.
        now = time.time()
        await mix.ask(100, issued_at=now - DAY, expires_in=lambda _: DAY - 1, policy=lambda _: None)
        taken, closed = await timed(service.sweep(limit=100))
        await service.wait_idle()
        if closed != 100:
            raise SystemExit(f"the sweep closed {closed} questions, not the 100 due")
        return taken

    async def reminders_none_due() -> float:
        return (await timed(service.nudges.sweep(time.time())))[0]

    async def reminders_due() -> float:
        # 100 questions asked an hour ago: a reminder or an escalation step due on each.
        now = time.time()
        ids = await mix.ask(
            100,
            issued_at=now - 3601,
            expires_in=spread,
            policy=lambda i: (REMIND, ESCALATE)[i % 2],
        )
        taken, owed = await timed(service.nudges.sweep(time.time()))
        await service.wait_idle()
        if owed != 100:
            raise SystemExit(f"the pass owed {owed} reminders and steps, not the 100 due")
        for interrupt_id in ids:  # the open count stays what it was
            await service.cancel(interrupt_id, by=WHO)
        await service.wait_idle()
        return taken

    async def claim() -> float:
        now = time.time()
        call = stores.outbox.claim(
            now, until=now + 30, owner="bench", surfaces=["bench", API_SURFACE]
        )
        return (await timed(call))[0]

    return {
        "ask + answer + resume": cycle,
        "pending first page": pending,
        "sweep, nothing due": nothing_due,
        "sweep, 100 due": hundred_due,
        "reminder pass, nothing due": reminders_none_due,
        "reminder pass, 100 due": reminders_due,
        "deliverer claim": claim,
    }


async def p50_ms(operation: Operation, samples: int) -> float:
    await operation()  # warm: caches and prepared statements
    return statistics.median([await operation() for _ in range(samples)])


async def copied(ours: Cycles, mix: Mix, copier: Copier, template: Template, n: int) -> None:
    """``n`` more open questions, copies of the template's (``bench/_copies.py``), a batch
    at a time; the growers number their later questions after the copies'."""
    # The copies' numbers after every number the growers have used, and theirs after those.
    template.number_after({"C": ours.next_number - 1})
    template.number_after(dict.fromkeys(MIX_STEMS, mix.next_number - 1))
    copies = template.copies(n)
    while batch := list(itertools.islice(copies, COPY_BATCH)):
        await copier.insert(batch)
    counters = template.counters
    ours.number_from(counters["C"] + 1)
    mix.number_from(max(counters[stem] for stem in MIX_STEMS) + 1)


async def grow(
    backend: str,
    url: str,
    ours: Cycles,
    args: argparse.Namespace,
    on_disk: Callable[[], Awaitable[int]],
    settle: Callable[[], Awaitable[None]],
    copier: Copier,
) -> dict[str, dict[int, float]]:
    """Each operation's p50 (ms) at each size, keyed by operation then size."""
    figures: dict[str, dict[int, float]] = {}
    open_now = 0
    mix = Mix(ours)
    template: Template | None = None
    for size in sizes(args.max):
        began = time.perf_counter()
        if template is None or args.lifecycle:
            await grow_mix(ours, mix, size - open_now)
            if template is None and not args.lifecycle:
                # Before any operation: the template is the grown questions alone.
                template = await copier.template()
        else:
            await copied(ours, mix, copier, template, size - open_now)
        await settle()
        # At least: the server's own creates (bench/_served.py) stay open too.
        if (counted := await copier.open_count()) < size:
            raise SystemExit(f"{backend}: {counted:,} questions open, not {size:,}")
        open_now = size
        print(
            f"{backend}: {size:,} open ({time.perf_counter() - began:.1f} s to grow)",
            file=sys.stderr,
        )
        for name, operation in operations(ours, mix).items():
            figures.setdefault(name, {})[size] = await p50_ms(operation, args.samples)
        if not args.no_server:
            for name, value in (await _served.figures(url, args.samples)).items():
                figures.setdefault(RSS if name == "rss" else name, {})[size] = value
    disk = await on_disk()
    print(f"{backend} bytes on disk per open question at {open_now:,}: {disk / open_now:,.0f}")
    return figures


async def schema_bytes(url: str) -> int:
    schema = url.rsplit("=", 1)[1]
    conn = await asyncpg.connect(url)
    try:
        return int(
            await conn.fetchval(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')",
                schema,
            )
        )
    finally:
        await conn.close()


async def vacuumed(url: str) -> None:
    """What autovacuum does between passes (migration 16 has it vacuum the queue tables
    after a fixed count of dead rows), done here when the server runs without it: dead
    index entries left by closed, nudged and delivered rows would otherwise pile up."""
    schema = url.rsplit("=", 1)[1]
    conn = await asyncpg.connect(url)
    try:
        if await conn.fetchval("SHOW autovacuum") == "on":
            return
        tables = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
        for row in tables:
            await conn.execute(f'VACUUM (ANALYZE) "{schema}"."{row["tablename"]}"')
    finally:
        await conn.close()


async def checkpointed_pg(url: str) -> None:
    """The pages a size's growth dirtied written out before anything is timed: a million
    questions copied in minutes leave gigabytes for the server's checkpointer, which
    would write them under the timed operations (a deployment grows over weeks)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CHECKPOINT")
    finally:
        await conn.close()


async def on_sqlite(args: argparse.Namespace) -> dict[str, dict[int, float]]:
    """Each operation's p50s on a SQLite file in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.sqlite3"

        url = f"sqlite:///{path}"
        async with cycles(url, also=[API_SURFACE]) as ours:

            async def checkpointed() -> None:
                """The write-ahead log copied into the database, as the store's own checkpoints
                do as it goes: a size's copies are not left in the log for the timed reads to
                search (SQLite's B-trees drop a deleted entry at once: nothing to vacuum)."""
                db: Any = ours.stores
                await db._db.run(lambda conn: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)"))

            async def sqlite_bytes() -> int:
                # The pages the questions take, not a log of the latest writes.
                await checkpointed()
                files = Path(folder).glob("scale.sqlite3*")  # noqa: ASYNC240 - once, at the end
                return sum(p.stat().st_size for p in files)

            return await grow(
                "sqlite",
                url,
                ours,
                args,
                sqlite_bytes,
                checkpointed,
                SqliteCopier(ours.stores),
            )


async def on_postgres(args: argparse.Namespace) -> dict[str, dict[int, float]] | None:
    """Each operation's p50s on a fresh PostgreSQL schema; None if there is no server."""
    async with postgres_schema() as pg_url:
        if pg_url is not None:
            async with cycles(pg_url, also=[API_SURFACE]) as ours:

                async def postgres_bytes() -> int:
                    return await schema_bytes(pg_url)

                async def postgres_vacuumed() -> None:
                    await vacuumed(pg_url)
                    await checkpointed_pg(pg_url)

                return await grow(
                    "postgres",
                    pg_url,
                    ours,
                    args,
                    postgres_bytes,
                    postgres_vacuumed,
                    PostgresCopier(pg_url),
                )
    return None


async def main(args: argparse.Namespace) -> int:
    results: dict[str, dict[str, dict[int, float]]] = {}
    if args.backend in ("both", "sqlite"):
        results["sqlite"] = await on_sqlite(args)
    if args.backend in ("both", "postgres"):
        figures = await on_postgres(args)
        if figures is not None:
            results["postgres"] = figures
    worst = (0.0, "", "")
    for backend, figures in results.items():
        for name, by_size in figures.items():
            smallest, largest = min(by_size), max(by_size)
            if name == RSS:  # a bound of its own (MiB), not a ratio
                print(
                    f"{backend} {name}: at {smallest:,} = {by_size[smallest]:.1f} MiB,"
                    f" at {largest:,} = {by_size[largest]:.1f} MiB"
                )
                continue
            ratio = by_size[largest] / by_size[smallest]
            print(
                f"{backend} {name}: p50 at {smallest:,} = {by_size[smallest]:.2f} ms,"
                f" at {largest:,} = {by_size[largest]:.2f} ms (x{ratio:.2f})"
            )
            worst = max(worst, (ratio, backend, name))
    print(f"scale: worst ratio {worst[0]:.2f} ({worst[1]} {worst[2]})")
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--max", type=int, default=1_000_000, help=f"open questions at the end (>= {SMALLEST:,})"
    )
    parser.add_argument("--samples", type=int, default=20, help="runs of each operation per size")
    parser.add_argument(
        "--backend",
        choices=("both", "sqlite", "postgres"),
        default="both",
        help="the stores measured",
    )
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="leave out the server process's parts (/v1 create and list, its RSS)",
    )
    parser.add_argument(
        "--lifecycle",
        action="store_true",
        help="grow every size through the lifecycle's write paths, not by copies (slow)",
    )
    args = parser.parse_args(argv)
    if args.max < SMALLEST:
        parser.error(f"--max must be at least {SMALLEST:,}")
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
