"""Separate OS processes on one SQLite file: tokens spent once, foreign locks never block us."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

from bot.stores import AuditEvent, Question, SqliteStores
from bot.stores.sqlite._migrations import MIGRATIONS
from tests import waiting
from tests.stores import test_store_contract as contract
from tests.support import steps

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0

# Each child opens its own SqliteStores, says "ready", waits for a line on its
# stdin so both start spending together, then prints its wins per token.
SPENDER = """
import asyncio, json, sys, time
from bot.questions.lifecycle import Lifecycle
from bot.contract.answers import OtherAnswer
from bot.stores import Closing, QuestionStatus, SqliteStores

async def main() -> None:
    path, by, reps, ids = sys.argv[1:5]
    stores = await SqliteStores.open(path)
    lifecycle = Lifecycle(stores.unit)
    try:
        print("ready", flush=True)
        sys.stdin.readline()  # "go", written to both children at once
        wins = dict.fromkeys(json.loads(ids), 0)
        for _ in range(int(reps)):
            for interrupt_id in wins:
                closing = Closing(QuestionStatus.ANSWERED, by, time.time(), OtherAnswer({"by": by}))
                wins[interrupt_id] += await lifecycle.close(interrupt_id, closing) is not None
        print(json.dumps(wins), flush=True)
    finally:
        await stores.close()

asyncio.run(main())
"""

# Each child only opens (so migrates) the file once its stdin says go.
OPENER = """
import asyncio, sys
from bot.stores import SqliteStores

async def main() -> None:
    path = sys.argv[1]  # argv[2], the process name, is unused
    print("ready", flush=True)
    sys.stdin.readline()  # "go", written to both children at once
    await (await SqliteStores.open(path)).close()
    print("{}", flush=True)

asyncio.run(main())
"""

# Takes the write lock, writes one audit row, says "locked", holds the lock
# until a line arrives on its stdin, then commits.
# The audit's link functions are registered as the bridge's own connections register them:
# without them no program can write the audit (its trigger links each row).
HOLDER = """
import sqlite3, sys

from bot.audit import event_digest, genesis, link

conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.create_function("audit_genesis", 1, genesis)
conn.create_function("audit_link", 2, link)
conn.execute("BEGIN IMMEDIATE")
conn.execute(
    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest)"
    " VALUES (0, 'holder', '', '', '', '{}', ?)", (event_digest(0, "holder", "", "", {}),)
)
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
"""


def pause(interrupt_id: str) -> Question:
    """The contract's question, named "approve", with no payload and no expiry to speak of."""
    return contract.pause(interrupt_id, name="approve", payload={}, issued_at=0.0, expires_at=1e12)


async def race(script: str, path: Path, *args: str) -> list[dict[str, int]]:
    """Run ``script path proc-N *args`` twice, started together; return each one's output."""
    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            script,
            str(path),
            f"proc-{n}",
            *args,
            cwd=REPO,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for n in range(2)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            ready = await asyncio.wait_for(child.stdout.readline(), TIMEOUT)
            assert ready == b"ready\n", (ready, await child.communicate())
        await waiting.release(children)
        outputs = [await asyncio.wait_for(child.communicate(), TIMEOUT) for child in children]
    finally:
        for child in children:
            if child.returncode is None:
                child.kill()
                await child.communicate()
    for child, (_, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err.decode()
    return [json.loads(out.splitlines()[-1]) for out, _ in outputs]


async def prepare(path: Path, interrupt_ids: list[str]) -> None:
    stores = await SqliteStores.open(path)
    try:
        for interrupt_id in interrupt_ids:
            await steps(stores).issue(pause(interrupt_id))
    finally:
        await stores.close()


def spenders(path: Path) -> dict[str, str]:
    """Who the file says closed (so spent) each pause; an open one has no spender."""
    with closing(sqlite3.connect(path)) as conn:
        return dict(
            conn.execute("SELECT interrupt_id, closed_by FROM pauses WHERE status <> 'outstanding'")
        )


async def test_two_processes_racing_200_spends_of_one_token_have_one_winner(
    tmp_path: Path,
) -> None:
    """Two processes spend one token 100 times each: exactly one spend succeeds."""
    path = tmp_path / "race.sqlite3"
    await prepare(path, ["tok"])

    results = await race(SPENDER, path, "100", json.dumps(["tok"]))

    wins = [result["tok"] for result in results]
    assert sum(wins) == 1
    assert spenders(path) == {"tok": f"proc-{wins.index(1)}"}


async def test_two_processes_racing_over_20_tokens_spend_each_once(tmp_path: Path) -> None:
    """200 attempts over 20 tokens (10 each) from two processes: exactly 20 succeed."""
    path = tmp_path / "race.sqlite3"
    tokens = [f"tok-{n}" for n in range(20)]
    await prepare(path, tokens)

    results = await race(SPENDER, path, "5", json.dumps(tokens))

    assert sum(sum(result.values()) for result in results) == 20
    for token in tokens:
        assert [result[token] for result in results].count(1) == 1, token
    winners = {token: f"proc-{0 if results[0][token] else 1}" for token in tokens}
    assert spenders(path) == winners


async def test_two_processes_creating_one_file_migrate_it_once(tmp_path: Path) -> None:
    """Two processes opening a new file at once both succeed and record each migration once."""
    path = tmp_path / "new.sqlite3"

    await race(OPENER, path)

    with closing(sqlite3.connect(path)) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [m.version for m in MIGRATIONS]


async def test_a_writer_in_another_process_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """While another process holds the write lock, a write waits off the loop, then lands."""
    path = tmp_path / "locked.sqlite3"
    stores = await SqliteStores.open(path)
    # What runs on the loop never waits for a lock: it meets SQLITE_BUSY at once.
    busy = await stores._db.run(lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0])
    assert busy == 0
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER,
        str(path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert await asyncio.wait_for(holder.stdout.readline(), TIMEOUT) == b"locked\n"
        ours = asyncio.create_task(stores.audit.append(AuditEvent(at=1.0, kind="ours")))
        # The holder commits only when told, so ours cannot land before then.
        # A write that waited on the loop would let it turn no more until it
        # gave up; waiting in the worker, the loop goes on turning meanwhile.
        ticks = 0
        while ticks < 10:
            await asyncio.sleep(0)
            assert not ours.done()
            ticks += 1
        _, err = await asyncio.wait_for(holder.communicate(b"commit\n"), TIMEOUT)
        assert holder.returncode == 0, err.decode()
        await asyncio.wait_for(ours, TIMEOUT)

        # Ours landed after the holder's commit: it waited for the lock, in the
        # worker, while the loop went on ticking.
        assert [e.kind for e in await stores.audit.recent()] == ["ours", "holder"]
        assert ticks >= 10, ticks
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.communicate()
        await stores.close()
