"""`python -m bot audit` in real processes on SQLite and PostgreSQL: an export verifies, and
each kind of tampering with the export file is named."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import pytest

from bot.audit import event_digest, link
from bot.stores import AuditEvent, open_stores
from bot.stores.postgres._db import Database as PostgresDatabase
from bot.stores.postgres._migrations import migrate as migrate_postgres
from bot.stores.sqlite._migrations import migrate as migrate_sqlite
from tests.stores._postgres import fresh_schema

ROOT = Path(__file__).resolve().parents[2]
OLD_KEY = "kold:" + "o" * 48
NEW_KEY = "knew:" + "n" * 48
RUNS = ("run-a", "run-b", "run-c")
TIMEOUT = 120


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'bot.sqlite3'}"
        return
    async with fresh_schema() as url:
        yield url


async def bot(
    cwd: Path,
    *words: str,
    url: str | None = None,
    keys: str = OLD_KEY,
    more: Mapping[str, str] | None = None,
) -> tuple[int, str, str]:
    """``python -m bot WORDS`` as an operator runs it (``more``: other settings); its exit
    code, stdout and stderr."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "BOT_SIGNING_KEYS": keys}
    env.update(more or {})
    if url is not None:
        env["DATABASE_URL"] = url
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *words,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def write_events(url: str, count: int, *, first: int = 0) -> None:
    """Events of three runs and of the bridge, as the bridge appends them."""
    stores = await open_stores(url)
    try:
        for n in range(first, first + count):
            detail = {"comment": f"ok {n}", "args": {"replicas": n}}
            event = AuditEvent(
                1000.0 + n, "answered", RUNS[n % 3], f"q{n % 3}", "slack:T:U", detail
            )
            await stores.audit.append(event)
        await stores.audit.append(AuditEvent(2000.0 + first, "admin", actor="shell:me"))
    finally:
        await stores.close()


async def exported(tmp_path: Path, url: str) -> list[str]:
    """Events, a checkpoint, more events (the unsigned tail), another checkpoint; exported."""
    await write_events(url, 9)
    assert (await bot(tmp_path, "audit", "checkpoint", url=url))[0] == 0
    await write_events(url, 6, first=9)
    assert (await bot(tmp_path, "audit", "checkpoint", url=url))[0] == 0
    code, out, err = await bot(tmp_path, "audit", "export", url=url)
    assert code == 0, err
    return out.splitlines()


async def verified(tmp_path: Path, lines: list[str], *, keys: str = OLD_KEY) -> tuple[int, str]:
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(lines) + "\n")
    # No DATABASE_URL: verifying a file needs the file and the keys only.
    code, out, err = await bot(tmp_path, "audit", "verify", str(path), keys=keys)
    return code, out + err


def where(lines: list[str], chain: str, seq: int) -> int:
    for index, line in enumerate(lines):
        value = json.loads(line)
        if value["type"] == "event" and (value["chain"], value["seq"]) == (chain, seq):
            return index
    raise AssertionError(f"{chain} #{seq} is not in the export")


async def test_an_exported_chain_verifies(tmp_path: Path, store_url: str) -> None:
    """Every event (15 answers, 2 admin commands) and both checkpoints, intact."""
    lines = await exported(tmp_path, store_url)
    assert await verified(tmp_path, lines) == (0, "17 events, 2 checkpoints, intact\n")
    code, out, _ = await bot(tmp_path, "audit", "verify", "--store", url=store_url)
    assert (code, out) == (0, "17 events, 2 checkpoints, intact\n")


def changed_byte(lines: list[str]) -> str:
    index = where(lines, "run-b", 2)
    assert '"ok 4"' in lines[index]
    lines[index] = lines[index].replace('"ok 4"', '"ok 5"')
    return f"line {index + 1}: event run-b #2 was changed"


def removed(lines: list[str]) -> str:
    index = where(lines, "run-a", 2)
    del lines[index]
    return f"line {index + 1}: event run-a #3 comes where #2 should: an event was removed"


def swapped(lines: list[str]) -> str:
    index = where(lines, "run-c", 3)
    lines[index], lines[index + 1] = lines[index + 1], lines[index]
    return (
        f"line {index + 1}: event run-c #4 comes where #3 should: an event was removed, reordered"
    )


def forged(lines: list[str]) -> str:
    """A well-made forgery: its digest and its link to the event before it are right."""
    index = where(lines, "run-a", 2)
    before = json.loads(lines[index])
    fake = {**before, "seq": 3, "at": before["at"] + 1, "detail": {"comment": "approved"}}
    fake["digest"] = event_digest(
        fake["at"], fake["kind"], fake["interrupt_id"], fake["actor"], fake["detail"]
    )
    fake["hash"] = link(before["hash"], fake["digest"])
    lines.insert(index + 1, json.dumps(fake))
    # Checkpoint 1 signed the real #3: the forgery, ahead of it, is the line named.
    return (
        f"line {index + 2}: event run-a #3 differs from what checkpoint 1 signed: it, or an "
        "earlier event of its chain, was changed, removed or inserted"
    )


def cut_tail(lines: list[str]) -> str:
    """The newest event of a chain a checkpoint signed, removed."""
    index = where(lines, "run-b", 5)
    del lines[index]
    return (
        "chain run-b ends at #4, but checkpoint 2 signed it up to #5: event #5 and after "
        "were removed"
    )


@pytest.mark.parametrize("tamper", [changed_byte, removed, swapped, forged, cut_tail])
async def test_tampering_is_named(
    tmp_path: Path, store_url: str, tamper: Callable[[list[str]], str]
) -> None:
    """One byte changed, one event deleted, two swapped, one forged, the newest cut: exit 1,
    naming the first event that does not hold."""
    lines = await exported(tmp_path, store_url)
    expected = tamper(lines)
    code, said = await verified(tmp_path, lines)
    assert code == 1
    assert said.startswith(f"not intact: {expected}"), said


async def test_a_checkpoint_signed_before_a_rotation_verifies_after_it(
    tmp_path: Path, store_url: str
) -> None:
    """Signed with the old key, then the new key signs: both verify with the rotated keyring,
    or with the public keys alone; without the old key, checkpoint 1 is named."""
    await write_events(store_url, 4)
    assert (await bot(tmp_path, "audit", "checkpoint", url=store_url))[0] == 0
    rotated = f"{NEW_KEY},{OLD_KEY}"
    await write_events(store_url, 4, first=4)
    code, out, _ = await bot(tmp_path, "audit", "checkpoint", url=store_url, keys=rotated)
    assert (code, out) == (0, "checkpoint 2 signed 4 chains\n")
    code, out, err = await bot(tmp_path, "audit", "export", url=store_url, keys=rotated)
    assert code == 0, err
    lines = out.splitlines()
    assert [json.loads(line)["kid"] for line in lines[:2]] == ["kold", "knew"]
    assert await verified(tmp_path, lines, keys=rotated) == (
        0,
        "10 events, 2 checkpoints, intact\n",
    )
    code, published, _ = await bot(tmp_path, "audit", "public-key", url=store_url, keys=rotated)
    assert code == 0 and published.startswith("knew:")
    path = tmp_path / "audit.jsonl"
    public = [f"--public-key={key}" for key in published.split()]
    code, out, _ = await bot(tmp_path, "audit", "verify", str(path), *public, keys="")
    assert (code, out) == (0, "10 events, 2 checkpoints, intact\n")
    code, said = await verified(tmp_path, lines, keys=NEW_KEY)
    assert code == 1
    assert "checkpoint 1 was changed or forged: it is signed with key 'kold'" in said


WRITER = """
import asyncio, sys, time
from bot.stores import AuditEvent, open_stores

async def main(url, name):
    stores = await open_stores(url)
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()
    async def one(n):
        # The same three runs from both replicas: their chains are written by both.
        event = AuditEvent(time.time(), "vote", f"run-{n % 3}", "q", name, {"n": n})
        await stores.audit.append(event)
    await asyncio.gather(*(one(n) for n in range(60)))
    await stores.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_a_chain_written_by_two_replicas_at_once_verifies(
    tmp_path: Path, store_url: str
) -> None:
    """Two processes append to the same runs' chains at once; every event is linked once."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    await write_events(store_url, 0)  # migrated before both start
    writers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WRITER,
            store_url,
            name,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for name in ("replica-1", "replica-2")
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert await asyncio.wait_for(writer.stdout.readline(), TIMEOUT) == b"ready\n"
    done = await asyncio.gather(*(w.communicate(b"go\n") for w in writers))
    assert [w.returncode for w in writers] == [0, 0], [err.decode() for _, err in done]
    assert (await bot(tmp_path, "audit", "checkpoint", url=store_url))[0] == 0
    code, out, _ = await bot(tmp_path, "audit", "verify", "--store", url=store_url)
    assert (code, out) == (0, "121 events, 1 checkpoints, intact\n")


async def test_the_migration_links_the_events_written_before_it(
    tmp_path: Path, store_url: str
) -> None:
    """Rows written at schema 14 are carried into their chains, oldest first, and verify."""
    rows = [(1.0 + n, "answered", RUNS[n % 2], "q", "x", json.dumps({"n": n})) for n in range(5)]
    insert = (
        "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
        " VALUES (?, ?, ?, ?, ?, ?)"
    )
    if store_url.startswith("sqlite"):
        conn = sqlite3.connect(store_url.removeprefix("sqlite:///"), isolation_level=None)
        migrate_sqlite(conn, target=14)
        conn.executemany(insert, rows)
        conn.close()
    else:
        db = await PostgresDatabase.open(store_url, pool_size=1, statement_timeout=10)
        async with db.acquire() as pg:
            await migrate_postgres(pg, target=14)
            numbered = insert.replace("?", "${}").format(*range(1, 7))
            await pg.executemany(numbered, rows)
        await db.close()
    await write_events(store_url, 3)
    code, out, _ = await bot(tmp_path, "audit", "verify", "--store", url=store_url)
    assert (code, out) == (0, "9 events, 0 checkpoints, intact\n")
    code, out, _ = await bot(tmp_path, "audit", "export", "--question", "run-a", url=store_url)
    assert [json.loads(line)["seq"] for line in out.splitlines()] == [1, 2, 3, 4]


async def test_a_filtered_export_verifies_as_partial(tmp_path: Path, store_url: str) -> None:
    """One question's chain, whole, with every checkpoint: intact with --partial; without it,
    the chains the checkpoints name and the file lacks are reported missing."""
    await exported(tmp_path, store_url)
    code, out, err = await bot(tmp_path, "audit", "export", "--question", "run-b", url=store_url)
    assert code == 0, err
    lines = out.splitlines()
    assert {json.loads(line).get("chain") for line in lines} == {None, "run-b"}
    path = tmp_path / "run-b.jsonl"
    path.write_text(out)
    code, said, _ = await bot(tmp_path, "audit", "verify", str(path), "--partial")
    assert (code, said) == (0, "5 events, 2 checkpoints, intact\n")
    code, said = await verified(tmp_path, lines)
    assert code == 1 and said.startswith("not intact: chain (bridge) is missing"), said
