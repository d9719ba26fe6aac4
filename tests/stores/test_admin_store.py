"""The admin store port on every backend, and how SQLite keeps it cheap at scale."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.contract.payloads import payload_of
from bot.questions.records import DeliveryKind, PendingFilter, answer_bucket
from bot.stores import AuditEvent, Closing, Question, QuestionStatus, RunRecord, Stores, open_stores
from bot.stores.sqlite._admin import _pending_sql
from bot.stores.sqlite._migrations import LATEST_VERSION, migrate
from tests.support import steps


def pause(n: int, **changes: Any) -> Question:
    record = Question(
        interrupt_id=f"i{n}",
        run_id=f"run-{n}",
        scope="T1:C1",
        name="ask_user",
        tool_call_id=f"call-{n}",
        checkpoint_id=f"run-{n}:1",
        payload=payload_of("ask_user", {"question": f"q{n}?"}),
        issued_at=1000.0 + n,
        expires_at=5000.0,
    )
    return dataclasses.replace(record, **changes)


def run(n: int, requester: str = "alice") -> RunRecord:
    return RunRecord(
        run_id=f"run-{n}",
        scope="T1:C1",
        surface="slack",
        requester=requester,
        text="go",
        created_at=1.0,
        conversation={"key": f"k{n}"},
    )


async def test_pending_pages_in_issue_order_and_skips_closed_rows(stores: Stores) -> None:
    """Keyset pages: each cursor continues after the last row, closed rows never listed."""
    for n in range(5):
        await steps(stores).start(run(n, "bob" if n == 3 else "alice"))
        await steps(stores).issue(pause(n, name="approval" if n == 4 else "ask_user"))
    await steps(stores).spend("i1", Closing(QuestionStatus.ANSWERED, by="x", at=1500.0))
    first = await stores.admin.pending(where=PendingFilter(), limit=2)
    assert [q.interrupt_id for q, *_ in first] == ["i0", "i2"]
    # The question as stored, with its run's requester and surface beside it.
    (listed, requester, surface, _), _ = first
    assert (listed, requester, surface) == (await stores.ledger.get("i0"), "alice", "slack")
    after = first[-1][-1]
    rest = await stores.admin.pending(where=PendingFilter(), after=after, limit=10)
    assert [q.interrupt_id for q, *_ in rest] == ["i3", "i4"]
    bob = await stores.admin.pending(where=PendingFilter(requester="bob"))
    assert [(q.interrupt_id, requester) for q, requester, *_ in bob] == [("i3", "bob")]
    named = await stores.admin.pending(where=PendingFilter(name="approval", scope="T1:C1"))
    assert [q.interrupt_id for q, *_ in named] == ["i4"]
    assert await stores.admin.pending(where=PendingFilter(scope="other")) == []
    with pytest.raises(ValueError, match="cursor"):
        await stores.admin.pending(where=PendingFilter(), after="'; DROP TABLE pauses")


async def test_stats_follow_every_status_change(stores: Stores) -> None:
    """Counts move with issue, spend and re-issue; percentiles come from answered rows only."""
    for n in range(4):
        await steps(stores).issue(pause(n))
    await steps(stores).spend("i0", Closing(QuestionStatus.ANSWERED, by="a", at=1000.0 + 30))
    await steps(stores).spend("i1", Closing(QuestionStatus.ANSWERED, by="a", at=1001.0 + 7200))
    await steps(stores).spend("i2", Closing(QuestionStatus.EXPIRED, by="", at=6000.0))
    await stores.audit.append(AuditEvent(1.0, "refused", detail={"reason": "TokenExpired"}))
    await stores.audit.append(AuditEvent(2.0, "refused", detail={"reason": "TokenExpired"}))
    await stores.audit.append(AuditEvent(3.0, "answered", detail={"reason": "not a refusal"}))
    s = await stores.admin.stats()
    assert (s.issued, s.outstanding, s.answered, s.expired, s.cancelled) == (4, 1, 2, 1, 0)
    assert s.refusals == {"TokenExpired": 2}
    assert (s.answer_seconds_p50, s.answer_seconds_p90) == (30.0, 7200.0)


async def test_extend_and_repost_touch_only_open_questions_and_owe_the_redraws(
    stores: Stores,
) -> None:
    """Each writes its audit event and outbox rows with the change; a closed row is None."""
    await steps(stores).start(run(0))
    await steps(stores).issue(pause(0))
    extended = await steps(stores).extend("i0", expires_at=9000.0, at=2000.0, actor="root")
    assert extended is not None and extended.expires_at == 9000.0
    await steps(stores).set_message_ref("i0", {"ts": "1"})
    assert await steps(stores).repost("i0", at=2001.0, actor="root") is not None
    kinds = [d.kind for d in await stores.outbox.of_run("run-0")]
    assert kinds == [
        DeliveryKind.PUBLISH,
        DeliveryKind.REFRESH,
        DeliveryKind.PUBLISH,
        DeliveryKind.MOVED,
    ]
    moved = (await stores.outbox.of_run("run-0"))[-1]
    assert moved.body == {"previous_ref": {"ts": "1"}}
    events = [(e.kind, e.actor) for e in await stores.audit.recent(run_id="run-0")]
    assert ("extended", "root") in events and ("resent", "root") in events
    await steps(stores).spend("i0", Closing(QuestionStatus.CANCELLED, by="root", at=2002.0))
    assert await steps(stores).extend("i0", expires_at=9500.0, at=2003.0, actor="root") is None
    assert await steps(stores).repost("i0", at=2003.0, actor="root") is None
    assert await steps(stores).repost("nope", at=2003.0, actor="root") is None


@pytest.mark.parametrize(
    ("where", "index"),
    [
        (PendingFilter(), "pauses_open"),
        (PendingFilter(scope="T1:C1"), "pauses_open_scope"),
        (PendingFilter(name="approval"), "pauses_open_name"),
        (PendingFilter(requester="alice"), "runs_requester"),
    ],
)
async def test_sqlite_pending_reads_an_index_never_the_whole_table(
    tmp_path: Path, where: PendingFilter, index: str
) -> None:
    """Each filter's plan searches its index; the unfiltered one needs no sort at all."""
    opened = await open_stores(f"sqlite:///{tmp_path}/plan.sqlite3")
    await opened.close()
    conn = sqlite3.connect(tmp_path / "plan.sqlite3")
    sql = _pending_sql(where)
    plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", [1] * sql.count("?"))]
    conn.close()
    assert any(f"INDEX {index}" in step for step in plan), plan
    assert not any(step.startswith("SCAN p") or step.startswith("SCAN r") for step in plan), plan
    if where == PendingFilter():
        assert not any("TEMP B-TREE" in step for step in plan), plan


async def test_migration_6_counts_the_rows_already_there(tmp_path: Path) -> None:
    """Counters start from the table as it was, not from zero."""
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=5)
    columns = "interrupt_id, run_id, scope, name, tool_call_id, checkpoint_id, payload,"
    columns += " issued_at, expires_at, root_run_id, session_id, thread_id, status, closed_by,"
    columns += " closed_at"
    rows = [
        (f"i{n}", "r", "s", "ask_user", f"c{n}", "k", "{}", 0.0, 9.0, "", "", "", status, "", at)
        for n, (status, at) in enumerate(
            [("answered", 90.0), ("answered", 4000.0), ("expired", 9.0), ("outstanding", None)]
        )
    ]
    insert = f"INSERT INTO pauses ({columns}) VALUES ({', '.join('?' * 15)})"  # noqa: S608 - our own columns
    conn.executemany(insert, rows)
    conn.execute(
        "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
        " VALUES (1, 'refused', '', '', 'x', '{\"reason\": \"ScopeMismatch\"}')"
    )
    assert migrate(conn) == LATEST_VERSION
    conn.close()
    stores = await open_stores(f"sqlite:///{path}")
    try:
        s = await stores.admin.stats()
    finally:
        await stores.close()
    assert (s.issued, s.answered, s.expired, s.outstanding) == (4, 2, 1, 1)
    assert s.refusals == {"ScopeMismatch": 1}
    assert (s.answer_seconds_p50, s.answer_seconds_p90) == (90.0, answer_bucket(4000.0))
