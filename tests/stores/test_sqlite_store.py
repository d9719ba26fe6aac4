"""SQLite-only behaviour: durability, migrations, pragmas, checkpoints, atomic spend, URLs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path

import pytest

from bot.audit import BRIDGE_CHAIN, checkpoint_keys, genesis, link
from bot.contract.answers import OtherAnswer
from bot.contract.payloads import OtherPayload
from bot.service.running.foreground import Foreground
from bot.stores import (
    AuditEvent,
    Closing,
    Question,
    QuestionStatus,
    RunRecord,
    SqliteStores,
    StoreError,
    open_stores,
)
from bot.stores.sqlite import _db as _sqlite_db
from bot.stores.sqlite._migrations import LATEST_VERSION, MIGRATIONS, migrate
from tests.stores import _version_12 as version_12
from tests.stores import _version_15 as version_15
from tests.stores import test_store_contract as contract
from tests.stores._version_12 import keys_carry_their_old_questions
from tests.support import steps

CHECKPOINT_KEY = checkpoint_keys([("k1", "s" * 48)])[0]


def pause(interrupt_id: str = "i1") -> Question:
    """The contract's question, named "approve" and asking only "Deploy?"."""
    return contract.pause(interrupt_id, name="approve", payload={"question": "Deploy?"})


ANSWER = Closing(
    status=QuestionStatus.ANSWERED, by="alice", at=150.0, answer=OtherAnswer({"choice": "yes"})
)


@asynccontextmanager
async def opened(path: Path) -> AsyncIterator[SqliteStores]:
    """The store on ``path``, closed when the block ends however it ends."""
    stores = await SqliteStores.open(path)
    try:
        yield stores
    finally:
        await stores.close()


def raw(path: Path) -> closing[sqlite3.Connection]:
    """A plain connection to inspect or sabotage the file behind the store's back."""
    return closing(sqlite3.connect(path, isolation_level=None))


@contextmanager
def at_version(path: Path, version: int) -> Iterator[sqlite3.Connection]:
    """A plain connection to a new file at ``path`` migrated only to ``version``, to fill
    as a bot of that version would have."""
    with raw(path) as conn:
        assert migrate(conn, str(path), target=version) == version
        yield conn


async def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    """Everything written is there after the store is closed and the file reopened."""
    path = tmp_path / "bot.sqlite3"
    async with opened(path) as stores:
        await steps(stores).issue(pause("i1"))
        await steps(stores).issue(pause("i2"))
        assert await steps(stores).spend("i1", ANSWER)
        await steps(stores).start(
            RunRecord("run-1", "team-a", "slack", "alice", "go", created_at=1.0)
        )
        checkpoint_id = await stores.checkpoints.save("run-1", {"step": 3})
        await stores.audit.append(AuditEvent(at=1.0, kind="issued", run_id="run-1"))

    async with opened(path) as reopened:
        answered = await reopened.ledger.get("i1")
        assert answered is not None
        assert (answered.status, answered.closed_by) == (QuestionStatus.ANSWERED, "alice")
        assert [p.interrupt_id for p in await reopened.ledger.outstanding()] == ["i2"]
        assert await steps(reopened).spend("i1", ANSWER) is False  # still spent
        assert (await reopened.runs.get("run-1")) is not None
        assert await reopened.checkpoints.load(checkpoint_id) == {"step": 3}
        kinds = [e.kind for e in await reopened.audit.recent()]
        assert kinds == ["issued", "started", "answered", "paused", "paused"]


async def test_migrations_are_applied_once(tmp_path: Path) -> None:
    """Reopening a file does not re-run or re-record its migrations."""
    path = tmp_path / "bot.sqlite3"
    for _ in range(3):
        await (await SqliteStores.open(path)).close()
    with raw(path) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [m.version for m in MIGRATIONS]


async def test_a_version_1_file_gets_conversation_keys_backfilled(tmp_path: Path) -> None:
    """Opening a version-1 file adds runs.conversation_key, filled from each run's JSON."""
    path = tmp_path / "bot.sqlite3"
    conversations = {
        "r1": '{"key":"C1","thread":""}',
        "r2": '{"channel":"X"}',
        "r3": '{"key":"C1"}',
    }
    with at_version(path, 1) as conn:
        for n, (run_id, conversation) in enumerate(conversations.items()):
            conn.execute(
                "INSERT INTO runs (run_id, scope, surface, requester, text, created_at,"
                " conversation, status, updated_at, final_text)"
                " VALUES (?, 'team-a', 'console', 'alice', ?, ?, ?, 'completed', 0, '')",
                (run_id, f"text {run_id}", float(n), conversation),
            )

    async with opened(path) as stores:
        with raw(path) as conn:
            keys = dict(conn.execute("SELECT run_id, conversation_key FROM runs"))
            versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations")]
        assert keys == {"r1": "C1", "r2": "", "r3": "C1"}
        assert versions == [m.version for m in MIGRATIONS]
        in_c1 = await stores.runs.in_conversation("console", "C1")
        assert [r.run_id for r in in_c1] == ["r1", "r3"]
        summaries = await stores.runs.conversations("console")
        assert [(c.key, c.title, c.runs) for c in summaries] == [
            ("C1", "text r1", 2),
            ("", "text r2", 1),
        ]


async def test_steady_writes_are_checkpointed_and_the_wal_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With autocheckpoint off, the store's own checkpoints still keep the WAL short."""
    monkeypatch.setattr("bot.stores.sqlite._db._CHECKPOINT_EVERY", 10)
    path = tmp_path / "bot.sqlite3"
    async with opened(path) as stores:
        for n in range(200):
            await stores.audit.append(AuditEvent(at=float(n), kind="tick"))
        with raw(path) as conn:
            _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        # 200 commits of 2+ pages each: without restarts the WAL would hold 400+ frames.
        assert frames < 100
        assert len(await stores.audit.recent(limit=1000)) == 200


async def test_writes_a_platform_waits_on_leave_the_checkpoint_to_other_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ack never pays for a checkpoint, unless a long burst lets the WAL grow too far."""
    monkeypatch.setattr("bot.stores.sqlite._db._CHECKPOINT_EVERY", 10)
    checkpoints: list[int] = []
    real = _sqlite_db._checkpoint

    def counted(conn: sqlite3.Connection) -> None:
        checkpoints.append(1)
        real(conn)

    monkeypatch.setattr("bot.stores.sqlite._db._checkpoint", counted)
    foreground = Foreground()
    async with opened(tmp_path / "bot.sqlite3") as stores:
        with foreground.request():
            for n in range(25):
                await stores.audit.append(AuditEvent(at=float(n), kind="acked"))
        assert checkpoints == []
        await stores.audit.append(AuditEvent(at=99.0, kind="background"))
        assert checkpoints == [1]
        with foreground.request():
            for n in range(45):
                await stores.audit.append(AuditEvent(at=float(n), kind="burst"))
        assert checkpoints == [1, 1]  # at 4 x 10 writes it could wait no longer


def test_a_checkpoint_skips_the_wal_restart_rather_than_wait_for_a_writer(tmp_path: Path) -> None:
    """Another connection holding the write lock: the checkpoint returns, nothing raised."""
    path = tmp_path / "bot.sqlite3"
    with closing(_sqlite_db._connect(str(path), busy_timeout_ms=0)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
        with raw(path) as writer:
            writer.execute("BEGIN IMMEDIATE")
            _sqlite_db._checkpoint(conn)
            writer.execute("ROLLBACK")
        assert not conn.in_transaction
        assert [tuple(row) for row in conn.execute("SELECT x FROM t")] == [(1,)]


async def test_checkpointing_after_every_write_keeps_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A checkpoint after each write, then close: nothing lost, no warning logged."""
    monkeypatch.setattr("bot.stores.sqlite._db._CHECKPOINT_EVERY", 1)
    path = tmp_path / "bot.sqlite3"
    stores = await SqliteStores.open(path)
    await stores.audit.append(AuditEvent(at=1.0, kind="first"))
    await stores.audit.append(AuditEvent(at=2.0, kind="last"))
    with raw(path) as conn:
        _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert frames <= 4  # the WAL restarted: only the last commit's frames are in it
    await stores.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]

    async with opened(path) as reopened:
        assert [e.kind for e in await reopened.audit.recent()] == ["last", "first"]


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    """A file migrated by a newer bot raises StoreError asking for an upgrade."""
    path = tmp_path / "bot.sqlite3"
    await (await SqliteStores.open(path)).close()
    with raw(path) as conn:
        conn.execute(
            "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            (LATEST_VERSION + 1, "from the future", 0.0),
        )
    with pytest.raises(StoreError, match="upgrade the bot"):
        await SqliteStores.open(path)


async def test_connections_use_wal_and_the_agreed_pragmas(tmp_path: Path) -> None:
    """WAL; only the worker's connection waits for locks; neither checkpoints on its own."""
    path = tmp_path / "bot.sqlite3"
    async with opened(path) as stores:
        with raw(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)

        def pragmas(conn: sqlite3.Connection) -> list[object]:
            names = ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")
            return [conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names] + [
                conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
            ]

        # synchronous 1 is NORMAL
        assert await stores._db.run(pragmas) == ["wal", 1, 0, 1, 0]
        assert await stores._db.run_in_worker(pragmas) == ["wal", 1, 5000, 1, 0]


async def test_open_creates_missing_folders(tmp_path: Path) -> None:
    """Opening a path under folders that do not exist yet creates them."""
    path = tmp_path / "a" / "b" / "bot.sqlite3"
    await (await SqliteStores.open(path)).close()
    assert path.is_file()


async def test_a_failing_spend_leaves_nothing_half_written(tmp_path: Path) -> None:
    """If closing the pause fails, the spend is rolled back too; once fixed, spend works."""
    path = tmp_path / "bot.sqlite3"
    async with opened(path) as stores:
        await steps(stores).issue(pause())
        with raw(path) as conn:
            conn.execute(
                "CREATE TRIGGER boom BEFORE UPDATE ON pauses BEGIN SELECT RAISE(ABORT, 'boom'); END"
            )
        with pytest.raises(sqlite3.Error, match="boom"):
            await steps(stores).spend("i1", ANSWER)

        with raw(path) as conn:
            # Nothing of the spend stands: no audit row, no owed edit, the run untouched.
            assert conn.execute("SELECT COUNT(*) FROM audit").fetchone() == (1,)  # "paused"
            assert conn.execute("SELECT COUNT(*) FROM outbox").fetchone() == (0,)
            conn.execute("DROP TRIGGER boom")
        row = await stores.ledger.get("i1")
        assert row is not None
        assert row.status is QuestionStatus.OUTSTANDING
        assert await steps(stores).spend("i1", ANSWER) is True


async def test_a_value_json_cannot_hold_is_refused_without_a_trace(tmp_path: Path) -> None:
    """A payload that is not JSON raises TypeError and leaves no row behind."""
    async with opened(tmp_path / "bot.sqlite3") as stores:
        bad = dataclasses.replace(pause(), payload=OtherPayload({"when": object()}))
        with pytest.raises(TypeError):
            await steps(stores).issue(bad)
        assert await stores.ledger.get("i1") is None
        with pytest.raises(TypeError):
            await stores.checkpoints.save("run-1", {"set": {1, 2}})
        assert await stores.checkpoints.load("run-1:1") is None


async def test_checkpoint_ids_count_up_per_run(tmp_path: Path) -> None:
    """Checkpoint ids are run_id:version, versions counting from 1 in each run."""
    async with opened(tmp_path / "bot.sqlite3") as stores:
        ids = [await stores.checkpoints.save(run_id, {}) for run_id in ("a", "a", "b", "a")]
        assert ids == ["a:1", "a:2", "b:1", "a:3"]


async def test_concurrent_spends_in_one_process_have_one_winner(tmp_path: Path) -> None:
    """Fifty spends gathered over two connections to one file: exactly one wins."""
    path = tmp_path / "bot.sqlite3"
    async with opened(path) as first, opened(path) as second:
        await steps(first).issue(pause())
        results = await asyncio.gather(
            *(steps(s).spend("i1", ANSWER) for s in [first, second] * 25)
        )
        assert results.count(True) == 1


async def test_a_closed_store_refuses_use_and_closes_twice(tmp_path: Path) -> None:
    """An open store answers ping; once closed, calls raise StoreError and close is harmless."""
    stores = await SqliteStores.open(tmp_path / "bot.sqlite3")
    await stores.ping()
    await stores.close()
    await stores.close()
    with pytest.raises(StoreError, match="closed"):
        await stores.ping()


async def test_open_stores_picks_the_backend_from_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sqlite forms open; relative paths resolve from the cwd."""
    monkeypatch.chdir(tmp_path)
    relative = await open_stores("sqlite:///data/rel.sqlite3")
    assert isinstance(relative, SqliteStores)
    await relative.close()
    assert (tmp_path / "data" / "rel.sqlite3").is_file()

    absolute_path = tmp_path / "abs" / "bot.sqlite3"
    absolute = await open_stores(f"sqlite:///{absolute_path}")  # "sqlite:////tmp/..."
    assert isinstance(absolute, SqliteStores)
    await absolute.close()
    assert absolute_path.is_file()


async def test_open_stores_refuses_memory_and_points_to_sqlite() -> None:
    """The in-memory backend is gone: memory:// is refused in one sentence that says
    to use a SQLite file (sqlite:///path) instead."""
    with pytest.raises(StoreError) as raised:
        await open_stores("memory://")
    message = str(raised.value)
    assert "memory://" in message
    assert "sqlite:///" in message
    assert "\n" not in message and ". " not in message.rstrip(".")


@pytest.mark.parametrize(
    "url",
    ["mysql://bot:hunter2@db/bot", "sqlite://", "sqlite:///", "mysql://x", "", "bot.db"],
)
async def test_open_stores_refuses_other_urls(url: str) -> None:
    """Unsupported URLs raise StoreError naming DATABASE_URL, never echoing a password."""
    with pytest.raises(StoreError, match="DATABASE_URL") as raised:
        await open_stores(url)
    assert "sqlite:////absolute" in str(raised.value)
    assert "hunter2" not in str(raised.value)


async def test_version_7_keeps_every_outbox_and_audit_row_and_their_order(
    tmp_path: Path,
) -> None:
    """Rebuilt without AUTOINCREMENT: rows and ids kept, new rows count on from them."""
    path = tmp_path / "old.sqlite3"
    with at_version(path, 6) as conn:
        conn.execute(
            "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
            " VALUES (1, 'refused', '', '', 'x', '{\"reason\": \"ScopeMismatch\"}')"
        )
        conn.execute(
            "INSERT INTO outbox (run_id, surface, kind, interrupt_id, body, created_at, state,"
            " attempts, next_at, claimed_until, claimed_by, last_error)"
            " VALUES ('r1', 'slack', 'outcome', '', '{}', 1, 'pending', 0, 1, 0, '', '')"
        )
        assert migrate(conn, target=7) == 7
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "spends" not in tables and "pauses_run" not in tables
        assert "outbox_due" in tables and "audit_run" in tables
        # Version 18 finds a run's events by their chain's index instead.
        assert migrate(conn) == LATEST_VERSION
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "audit_run" not in tables and "audit_chain" in tables
    async with opened(path) as stores:
        await stores.audit.append(AuditEvent(at=2.0, kind="later"))
        assert [e.kind for e in await stores.audit.recent()] == ["later", "refused"]
        # The refusal counter's trigger came back with its table.
        await stores.audit.append(
            AuditEvent(at=3.0, kind="refused", detail={"reason": "ScopeMismatch"})
        )
        assert (await stores.admin.stats()).refusals == {"ScopeMismatch": 2}
        (owed,) = await stores.outbox.of_run("r1")
        assert owed.delivery_id == 1


async def test_version_13_gives_each_old_question_to_the_key_its_name_named(
    tmp_path: Path,
) -> None:
    """A stored key's questions get its new id; another name's wait for its BOT_API_KEYS entry."""
    path = tmp_path / "old.sqlite3"
    with at_version(path, 12) as conn:
        for statement, params in version_12.statements():
            conn.execute(statement, params)
    async with opened(path) as stores:
        await keys_carry_their_old_questions(stores)


async def test_version_16_gives_each_open_question_its_next_nudge(tmp_path: Path) -> None:
    """Open questions with a policy get the time their next reminder or step is due."""
    path = tmp_path / "old.sqlite3"
    with at_version(path, 15) as conn:
        for statement, params in version_15.statements():
            conn.execute(statement, params)
    async with opened(path) as stores:
        await version_15.old_questions_owe_their_nudges(stores)


async def test_version_17_keeps_the_chains_and_their_heads(tmp_path: Path) -> None:
    """The heads rebuilt as one B-tree and the chain index made partial: events linked
    before go on being linked after, by the same heads, and the chains verify."""
    path = tmp_path / "old.sqlite3"
    with closing(_sqlite_db._connect(str(path), busy_timeout_ms=1000)) as conn:
        assert migrate(conn, str(path), target=16) == 16
        conn.execute(
            "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest)"
            " VALUES (1, 'asked', 'r1', 'q1', 'x', '{}', 'd1'),"
            " (2, 'asked', '', '', 'x', '{}', 'd2')"
        )
        before = conn.execute("SELECT chain, seq, hash FROM audit_heads ORDER BY chain").fetchall()
        assert migrate(conn, target=17) == 17
        assert conn.execute(
            "SELECT chain, seq, hash FROM audit_heads ORDER BY chain"
        ).fetchall() == (before)
        (heads,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'audit_heads'"
        ).fetchone()
        assert heads.endswith("WITHOUT ROWID")
    async with opened(path) as stores:
        await stores.audit.append(AuditEvent(at=3.0, kind="answered", run_id="r1"))
        # A new chain's first event, by its insert (version 18): its genesis, then the link.
        await stores.audit.append(AuditEvent(at=4.0, kind="asked", run_id="r2"))
        # The heads move when a checkpoint reads them, from the rows added since.
        assert await stores.audit_chain.checkpoint(CHECKPOINT_KEY, at=5.0) is not None
    with raw(path) as conn:
        rows = conn.execute("SELECT seq, digest, hash FROM audit WHERE run_id = 'r1' ORDER BY id")
        (one, _, first), (two, digest, second) = rows.fetchall()
        assert (one, two, second) == (1, 2, link(first, digest))
        new = conn.execute("SELECT seq, digest, hash FROM audit WHERE run_id = 'r2'").fetchall()
        assert [(seq, hashed) for seq, _, hashed in new] == [(1, link(genesis("r2"), new[0][1]))]
        heads = conn.execute("SELECT chain, seq FROM audit_heads ORDER BY chain").fetchall()
        assert heads == [(BRIDGE_CHAIN, 1), ("r1", 2), ("r2", 1)]
