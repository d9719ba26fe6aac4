"""PostgreSQL as several replicas see it: one winner per race, every change heard, faults survived.

Two ``PostgresStores`` opened on one schema are two replicas as far as the
database can tell: separate pools, separate sessions, real row locks.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg
import pytest

from bot.contract.answers import OtherAnswer
from bot.contract.payloads import payload_of
from bot.questions.records import AuditEvent, DeliveryKind
from bot.questions.write import Delivered, Marks, PostedBy
from bot.service.answering.outcomes import Redeemed, StoreUnavailable
from bot.stores import Closing, Question, QuestionStatus, RunRecord, RunStatus, StoreError
from bot.stores.ports import Change, Stores, changes_of
from bot.stores.postgres import PostgresStores
from bot.stores.postgres._migrations import LATEST_VERSION, MIGRATIONS, migrate
from bot.stores.postgres._unit import _marking
from bot.stores.sqlite._migrations import MIGRATIONS as SQLITE_MIGRATIONS
from bot.stores.url import open_stores
from tests import waiting
from tests.stores import _version_12 as version_12
from tests.stores import _version_15 as version_15
from tests.stores._postgres import admin_connection, fresh_schema, schema_url
from tests.stores._proxy import Proxy
from tests.stores._version_12 import keys_carry_their_old_questions
from tests.support import HarnessFactory, bridge_ports, steps

pytestmark = pytest.mark.postgres

T = TypeVar("T")
# Bounds on waits for something that should happen at once; never asserted on.
SETTLE = 10.0


@pytest.fixture
def url(pg_url: str) -> str:
    """This module's name for the conftest's schema of the test's own."""
    return pg_url


def run(run_id: str, **changes: Any) -> RunRecord:
    record = RunRecord(
        run_id=run_id,
        scope="T1",
        surface="console",
        requester="alice",
        text="deploy",
        created_at=1.0,
        conversation={"key": f"conv-{run_id}"},
    )
    return dataclasses.replace(record, **changes)


def pause(interrupt_id: str, run_id: str) -> Question:
    return Question(
        interrupt_id=interrupt_id,
        run_id=run_id,
        scope="T1",
        name="ask_user",
        tool_call_id=f"call-{interrupt_id}",
        checkpoint_id=f"{run_id}:1",
        payload=payload_of("ask_user", {"questions": ["Which?"]}),
        issued_at=10.0,
        expires_at=1e12,
    )


async def asked(stores: Stores, count: int, **changes: Any) -> None:
    """Runs r0, r1, ... each with its one question i0, i1, ... (with ``changes``)."""
    for n in range(count):
        await steps(stores).start(run(f"r{n}"))
        await steps(stores).issue(dataclasses.replace(pause(f"i{n}", f"r{n}"), **changes))


def answered(by: str) -> Closing:
    return Closing(
        QuestionStatus.ANSWERED, by=by, at=20.0, answer=OtherAnswer({"by": by}), lease_owner=by
    )


async def eventually(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    """Readiness wait on the server: an error counts as not yet."""
    errors = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError)
    return await waiting.eventually(check, what=what, seconds=SETTLE, every=0.05, errors=errors)


def test_the_migrations_have_sqlites_versions_and_meanings() -> None:
    """Version N means the same schema change on both SQL backends."""
    assert [(m.version, m.description) for m in MIGRATIONS] == [
        (m.version, m.description) for m in SQLITE_MIGRATIONS
    ]


async def test_replicas_starting_together_apply_each_migration_once(url: str) -> None:
    """Four replicas opening a fresh schema at once: versions 1..latest, each recorded once."""
    opened = await asyncio.gather(*(PostgresStores.open(url) for _ in range(4)))
    for stores in opened:
        await stores.close()
    conn = await admin_connection()
    try:
        schema = url.rsplit("=", 1)[1]
        versions = await conn.fetch(
            f'SELECT version FROM "{schema}".schema_migrations'  # noqa: S608 - our own name
        )
    finally:
        await conn.close()
    assert sorted(row["version"] for row in versions) == list(range(1, LATEST_VERSION + 1))


async def test_a_schema_newer_than_the_bot_is_refused(url: str) -> None:
    """A database migrated by a newer release is refused with a sentence, not used."""
    await (await PostgresStores.open(url)).close()
    conn = await admin_connection()
    try:
        schema = url.rsplit("=", 1)[1]
        await conn.execute(
            f'INSERT INTO "{schema}".schema_migrations VALUES (99, $1, 0)',  # noqa: S608 - ours
            "from the future",
        )
    finally:
        await conn.close()
    with pytest.raises(StoreError, match="newer than this bot knows"):
        await PostgresStores.open(url)


async def test_a_url_naming_a_missing_schema_is_refused() -> None:
    """No schema to create tables in: a StoreError saying so, not tables in the wrong place."""
    await (await admin_connection()).close()  # skips when there is no server
    with pytest.raises(StoreError, match="schema"):
        await PostgresStores.open(schema_url("no_such_schema_anywhere"))


async def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    """The URL may carry a password: the error names the failure, never the URL."""
    with pytest.raises(StoreError, match="DATABASE_URL") as raised:
        await open_stores("postgresql://bot:hunter2@127.0.0.1:9/bot")
    assert "hunter2" not in str(raised.value)


async def test_the_postgres_backend_shares_redemption() -> None:
    """Spends on PostgreSQL are seen by every replica, so the bot says it is shared."""
    from bot.human.factory import redemption_is_shared

    async with fresh_schema() as url:
        stores = await PostgresStores.open(url)
        try:
            assert redemption_is_shared(bridge_ports(stores)) is True
        finally:
            await stores.close()


async def test_one_spend_wins_across_replicas(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """200 spends of one token racing over two replicas: one True, one close, one edit owed."""
    a, b = replicas
    await steps(a).start(run("r1"))
    await steps(a).issue(pause("i1", "r1"))
    results = await asyncio.gather(
        *(steps(a if n % 2 else b).spend("i1", answered(f"p{n}")) for n in range(200))
    )
    assert results.count(True) == 1
    winner = f"p{results.index(True)}"
    row = await b.ledger.get("i1")
    assert row is not None and row.status is QuestionStatus.ANSWERED and row.closed_by == winner
    the_run = await b.runs.get("r1")
    assert the_run is not None and the_run.status is RunStatus.RUNNING
    assert the_run.lease_owner == winner
    kinds = [d.kind for d in await a.outbox.of_run("r1")]
    assert kinds == [DeliveryKind.PUBLISH, DeliveryKind.CLOSED]


async def test_each_due_delivery_goes_to_exactly_one_replica(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """Rows nobody holds, claimed by two replicas at once: every row once, none twice."""
    a, b = replicas
    await asked(a, 40)  # each question a PUBLISH row, born unclaimed

    async def deliver_all(stores: Stores, owner: str) -> list[int]:
        """Claim and deliver until a pass finds nothing, as a replica's deliverer does."""
        delivered: list[int] = []
        while rows := await stores.outbox.claim(
            100.0, until=200.0, owner=owner, surfaces=["console"], limit=5
        ):
            for row in rows:
                await steps(stores).delivered(row.delivery_id, at=100.0)
                delivered.append(row.delivery_id)
        return delivered

    owners = await asyncio.gather(*(deliver_all(a if n % 2 else b, f"w{n}") for n in range(4)))
    delivered = [i for owned in owners for i in owned]
    assert len(delivered) == len(set(delivered)) == 40


async def test_a_lapsed_run_is_taken_over_by_exactly_one_replica(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """Recovery on two replicas at once: each orphaned run is acquired by one of them."""
    a, b = replicas
    for n in range(20):
        await steps(a).start(run(f"r{n}", lease_owner="dead", lease_until=5.0))

    async def recover(stores: Stores, owner: str) -> list[str]:
        taken = []
        for run_id in await stores.leases.lapsed(10.0):
            if await stores.leases.acquire(run_id, owner, now=10.0, until=40.0):
                taken.append(run_id)
        return taken

    results = await asyncio.gather(*(recover(a if n % 2 else b, f"w{n}") for n in range(6)))
    taken = [run_id for batch in results for run_id in batch]
    assert sorted(taken) == sorted(f"r{n}" for n in range(20))
    # A live lease is not taken over.
    assert not await b.leases.acquire("r0", "thief", now=20.0, until=50.0)


async def test_every_replica_hears_a_question_open_and_close(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """Start, issue, spend and finish on A each reach a subscriber on B, naming the conversation."""
    a, b = replicas
    heard: asyncio.Queue[Change] = asyncio.Queue()
    unsubscribe = changes_of(b).subscribe(heard.put_nowait)
    await asyncio.wait_for(b.changes.listening.wait(), SETTLE)

    await steps(a).start(run("r1"))
    assert await asyncio.wait_for(heard.get(), SETTLE) == Change("r1", "console", "conv-r1")
    await steps(a).issue(pause("i1", "r1"))
    assert await asyncio.wait_for(heard.get(), SETTLE) == Change("r1", "console", "conv-r1")
    assert await steps(a).spend("i1", answered("alice"))
    assert await asyncio.wait_for(heard.get(), SETTLE) == Change("r1", "console", "conv-r1")
    assert await steps(a).finish("r1", RunStatus.COMPLETED, at=30.0, text="done")
    assert await asyncio.wait_for(heard.get(), SETTLE) == Change("r1", "console", "conv-r1")
    unsubscribe()
    assert heard.empty()


async def test_a_failed_spend_tells_nobody(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """NOTIFY is transactional: a refused spend (rolled back) announces nothing."""
    a, b = replicas
    heard: asyncio.Queue[Change] = asyncio.Queue()
    changes_of(b).subscribe(heard.put_nowait)
    await asyncio.wait_for(b.changes.listening.wait(), SETTLE)
    await steps(a).start(run("r1"))
    await steps(a).start(run("r2"))
    assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "r1"
    assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "r2"
    await steps(a).issue(pause("i1", "r1"))
    assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "r1"
    assert await steps(a).spend("i1", answered("alice"))
    assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "r1"
    assert not await steps(a).spend("i1", answered("bob"))  # rolled back
    await steps(a).issue(pause("i2", "r2"))
    # The next notice is r2's, so the refused spend sent none before it.
    assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "r2"


async def test_changes_in_another_schema_are_not_ours(url: str) -> None:
    """NOTIFY reaches the whole database; a replica keeps only its own schema's notices."""
    async with fresh_schema() as other_url:
        ours = await PostgresStores.open(url)
        theirs = await PostgresStores.open(other_url)
        try:
            heard: asyncio.Queue[Change] = asyncio.Queue()
            changes_of(ours).subscribe(heard.put_nowait)
            await asyncio.wait_for(ours.changes.listening.wait(), SETTLE)
            await steps(theirs).start(run("theirs"))
            await steps(theirs).issue(pause("t1", "theirs"))
            await steps(ours).start(run("ours"))
            await steps(ours).issue(pause("o1", "ours"))
            assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "ours"
        finally:
            await ours.close()
            await theirs.close()


async def test_statements_are_bounded_by_a_server_timeout(url: str) -> None:
    """Every pooled connection carries statement_timeout; a runaway statement is cancelled."""
    stores = await PostgresStores.open(url, statement_timeout=0.2)
    try:
        assert await stores._db.fetchval("SHOW statement_timeout") == "200ms"
        with pytest.raises(asyncpg.QueryCanceledError):
            await stores._db.fetchval("SELECT pg_sleep(30)")
        await stores.ping()  # the connection is still usable afterwards
    finally:
        await stores.close()


def _array_item(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _literal(value: Any) -> str:
    """``value`` (text, a number, or a list of them) spelt as an SQL literal."""
    if isinstance(value, list):
        items = ("NULL" if item is None else _array_item(str(item)) for item in value)
        value = "{" + ",".join(items) + "}"
    return "'" + str(value).replace("'", "''") + "'"


# Every shape of a deliverer's pass: rows done; and first-route posts; and further posts;
# each with its posts' events and without.
_POSTED = AuditEvent(at=1.0, kind="posted", run_id="r1", interrupt_id="q1", detail={"s": "x"})
_MARK_SHAPES = [
    (Marks(done=(Delivered(1, 1.0),)), ()),
    *(
        (Marks(done=(Delivered(1, 1.0),), posted=(PostedBy(1, {"ts": "1"}, post=post),)), audit)
        for post in (None, 1)
        for audit in ((), (_POSTED,))
    ),
]


@pytest.mark.parametrize("rows", [0, 30])
async def test_a_deliverers_marks_keep_one_plan_that_reads_by_key(url: str, rows: int) -> None:
    """The marks' connection keeps one plan per statement, made while the tables are empty
    (or hold a few rows): index lookups only, so a mark costs the same at any size."""
    stores = await PostgresStores.open(url)
    try:
        await asked(stores, rows)
        async with stores._db._bookkeeping.lease() as conn:
            assert await conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
            for n, (marks, audit) in enumerate(_MARK_SHAPES):
                sql, *params = _marking(marks, audit)
                await conn.execute(f"PREPARE mark_{n} AS {sql}")
                arguments = ", ".join(_literal(value) for value in params)
                plan = "\n".join(
                    row[0] for row in await conn.fetch(f"EXPLAIN EXECUTE mark_{n}({arguments})")
                )
                await conn.execute(f"DEALLOCATE mark_{n}")
                assert "Index Scan using outbox_pkey on outbox" in plan, plan
                for whole in ("Seq Scan", "Hash Join", "Merge Join"):
                    assert whole not in plan, plan
    finally:
        await stores.close()


async def test_closing_with_a_call_in_flight_lets_it_finish_and_never_forces_the_pool(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection a call ends with is kept for the next call, except once closing began:
    then it goes back, so the pool closes cleanly instead of being terminated."""
    stores = await PostgresStores.open(url)
    forced: list[bool] = []
    monkeypatch.setattr(asyncpg.pool.Pool, "terminate", lambda pool: forced.append(True))
    inside, go_on, pool_closing = asyncio.Event(), asyncio.Event(), asyncio.Event()
    close_pool = asyncpg.pool.Pool.close

    async def closing_pool(pool: asyncpg.Pool) -> None:
        if pool is stores._db._pool.pool:  # the call's pool, not the marks' one
            pool_closing.set()
        await close_pool(pool)

    monkeypatch.setattr(asyncpg.pool.Pool, "close", closing_pool)

    async def call() -> Any:
        async with stores._db.acquire() as conn:
            inside.set()
            await go_on.wait()
            return await conn.fetchval("SELECT 41 + 1")

    running = asyncio.create_task(call())
    await inside.wait()
    closing = asyncio.create_task(stores.close())
    await pool_closing.wait()  # close has begun, and waits for the call's connection
    go_on.set()
    assert await running == 42
    await closing
    assert forced == []


async def test_a_lost_database_fails_the_ping_and_the_pool_recovers_by_itself(
    url: str,
) -> None:
    """Connections cut: ping raises. Network back: ping succeeds with no help from us."""
    proxy = await Proxy().start()
    proxied = url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    assert proxied != url
    stores = await PostgresStores.open(proxied)
    try:
        await stores.ping()
        await asyncio.wait_for(stores.changes.listening.wait(), SETTLE)
        proxy.cut()
        with pytest.raises((OSError, asyncpg.PostgresError, asyncpg.InterfaceError)):
            await stores.ping()

        async def deaf() -> bool:
            return not stores.changes.listening.is_set()

        await eventually(deaf, "the change listener noticing the lost connection")
        proxy.restore()

        async def pings() -> bool:
            await stores.ping()
            return True

        await eventually(pings, "a ping after the network came back")
        # The change feed reconnects too, and hears another replica again.
        heard: asyncio.Queue[Change] = asyncio.Queue()
        changes_of(stores).subscribe(heard.put_nowait)
        await asyncio.wait_for(stores.changes.listening.wait(), SETTLE)
        direct = await PostgresStores.open(url)
        try:
            await steps(direct).start(run("r1"))
            await steps(direct).issue(pause("i1", "r1"))
        finally:
            await direct.close()
        assert (await asyncio.wait_for(heard.get(), SETTLE)).run_id == "r1"
    finally:
        await stores.close()
        await proxy.close()


async def test_redeem_with_the_database_gone_says_try_again_and_keeps_the_token(
    url: str, harness: HarnessFactory
) -> None:
    """StoreUnavailable while cut off, nothing spent; once back, the same token redeems."""
    from bot.human import ASK_USER
    from bot.testing import call, calls, question, say

    proxy = await Proxy().start()
    stores = await PostgresStores.open(url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}"))
    try:
        ask = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
        h = harness(stores, [calls(ask), say("deployed")])
        await h.start()
        good = {"answers": {"Which environment?": "staging"}}
        proxy.cut()
        assert isinstance(await h.answer(good), StoreUnavailable)
        proxy.restore()
        interrupt = h.surface.questions[-1][1]

        async def still_open() -> Question | None:
            row = await stores.ledger.get(interrupt.interrupt_id)
            return row if row is not None and row.status is QuestionStatus.OUTSTANDING else None

        await eventually(still_open, "the untouched question readable again")
        assert isinstance(await h.answer(good), Redeemed)
        assert h.surface.outcomes[-1][1] == "deployed"
    finally:
        await stores.close()
        await proxy.close()


async def test_each_expiry_is_handled_by_exactly_one_replica(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """Two replicas sweeping at once: every overdue question expires once, by one of them."""
    a, b = replicas
    await asked(a, 30, expires_at=50.0)

    async def sweep(stores: Stores, who: str) -> list[str]:
        expired = []
        while overdue := await stores.ledger.overdue(100.0, limit=7):
            for record in overdue:
                closing = Closing(QuestionStatus.EXPIRED, by=who, at=100.0)
                if await steps(stores).spend(record.interrupt_id, closing):
                    expired.append(record.interrupt_id)
        return expired

    results = await asyncio.gather(*(sweep(a if n % 2 else b, f"sweeper{n}") for n in range(4)))
    expired = [i for batch in results for i in batch]
    assert sorted(expired) == sorted(f"i{n}" for n in range(30))
    audit = await a.audit.recent(limit=1000)
    assert sum(event.kind == "expired" for event in audit) == 30


async def test_concurrent_checkpoints_of_one_run_get_distinct_versions(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """Saves racing on two replicas never reuse a version; each state loads back intact."""
    a, b = replicas
    ids = await asyncio.gather(
        *((a if n % 2 else b).checkpoints.save("r1", {"n": n}) for n in range(20))
    )
    assert sorted(ids, key=lambda i: int(i.rsplit(":", 1)[1])) == [f"r1:{v}" for v in range(1, 21)]
    loaded = [await b.checkpoints.load(i) for i in ids]
    assert loaded == [{"n": n} for n in range(20)]


async def filled_at(url: str, version: int, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
    """The schema ``url`` names migrated only to ``version``, then filled as a bot of that
    version would have (``statements`` use ``?``)."""
    conn = await admin_connection()
    try:
        await conn.execute(f"SET search_path TO {url.rsplit('=', 1)[1]}")
        await migrate(conn, target=version)
        for statement, params in statements:
            await conn.execute(version_12.numbered(statement), *params)
    finally:
        await conn.close()


async def test_version_13_gives_each_old_question_to_the_key_its_name_named(url: str) -> None:
    """A stored key's questions get its new id; another name's wait for its BOT_API_KEYS entry."""
    await filled_at(url, 12, version_12.statements())
    stores = await PostgresStores.open(url)
    try:
        await keys_carry_their_old_questions(stores)
    finally:
        await stores.close()


async def test_version_16_gives_each_open_question_its_next_nudge(url: str) -> None:
    """Open questions with a policy get the time their next reminder or step is due."""
    await filled_at(url, 15, version_15.statements())
    stores = await PostgresStores.open(url)
    try:
        await version_15.old_questions_owe_their_nudges(stores)
    finally:
        await stores.close()
