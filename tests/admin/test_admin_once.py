"""An admin command carrying a request's key applies once: replayed, retried, on any replica."""

from __future__ import annotations

import asyncio

import pytest

from bot.admin import AdminService, results
from bot.questions.lifecycle import Lifecycle
from bot.service.answering.outcomes import Responder
from bot.stores import QuestionStatus, Stores
from bot.stores.ports import Seen, StoredResponse
from bot.stores.postgres import PostgresStores
from bot.testing import FixedClock
from tests.stores.test_store_contract import pause, run

ROOT = Responder("test:root", "Root")
NOW = 150.0


def admin_of(stores: Stores) -> AdminService:
    return AdminService(
        stores=stores, admins={ROOT.id}, max_ttl_seconds=86_400.0, clock=FixedClock(NOW)
    )


async def asked(stores: Stores) -> str:
    lifecycle = Lifecycle(stores.unit)
    assert await lifecycle.start(run())
    record = pause(run_id="run-1")
    assert await lifecycle.ask(record) is not None
    return record.interrupt_id


async def reposts(stores: Stores) -> int:
    rows = await stores.outbox.of_run("run-1")
    return sum(1 for d in rows if d.kind == "publish" and d.body.get("repost"))


async def admin_events(stores: Stores) -> list[str]:
    events = await stores.audit.recent(run_id="run-1")
    return [e.detail["result"] for e in reversed(events) if e.kind == "admin"]


async def test_a_replayed_extend_moves_the_expiry_once(stores: Stores) -> None:
    """Same key: Extended, then AlreadyDone; the expiry moved by one hour; one audit."""
    iid = await asked(stores)
    admin = admin_of(stores)
    first = await admin.handle(f"extend {iid} 1h", who=ROOT, key="req-1")
    assert first == results.Extended(iid, "run-1", 200.0, 3800.0)
    assert await admin.handle(f"extend {iid} 1h", who=ROOT, key="req-1") == results.AlreadyDone(
        "extend", iid
    )
    row = await stores.ledger.get(iid)
    assert row is not None and row.expires_at == 3800.0
    assert await admin_events(stores) == ["Extended"]
    # The same words in another request are another command.
    assert isinstance(
        await admin.handle(f"extend {iid} 1h", who=ROOT, key="req-2"), results.Extended
    )


async def test_a_replayed_resend_and_cancel_apply_once(stores: Stores) -> None:
    """One repost owed for two sends of one resend; one cancel for two of one cancel."""
    iid = await asked(stores)
    admin = admin_of(stores)
    assert isinstance(await admin.handle(f"resend {iid}", who=ROOT, key="r"), results.Resent)
    assert isinstance(await admin.handle(f"resend {iid}", who=ROOT, key="r"), results.AlreadyDone)
    assert await reposts(stores) == 1
    assert isinstance(
        await admin.handle(f"cancel {iid} oops", who=ROOT, key="c"), results.CancelDone
    )
    assert await admin.handle(f"cancel {iid} oops", who=ROOT, key="c") == results.AlreadyDone(
        "cancel", iid
    )
    assert await admin_events(stores) == ["Resent", "CancelDone"]


async def test_without_a_key_each_command_applies(stores: Stores) -> None:
    """The shell and the console send no key: two extends are two extensions."""
    iid = await asked(stores)
    admin = admin_of(stores)
    for _ in range(2):
        assert isinstance(await admin.handle(f"extend {iid} 1h", who=ROOT), results.Extended)
    row = await stores.ledger.get(iid)
    assert row is not None and row.expires_at == 200.0 + 7200


@pytest.mark.postgres
async def test_a_replay_reaching_a_second_replica_changes_nothing(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """Replica B sees A's answer to a request, and A's command under the same key is done."""
    a, b = replicas
    iid = await asked(a)
    assert (await a.replays.claim("slack:sig", now=NOW, until=NOW + 600)).first
    answered = StoredResponse(200, b'{"text":"done"}', "application/json")
    await a.replays.settle("slack:sig", answered)
    assert await b.replays.claim("slack:sig", now=NOW + 1, until=NOW + 601) == Seen(False, answered)
    assert isinstance(
        await admin_of(a).handle(f"extend {iid} 1h", who=ROOT, key="k"), results.Extended
    )
    before = await b.ledger.get(iid)
    assert await admin_of(b).handle(f"extend {iid} 1h", who=ROOT, key="k") == results.AlreadyDone(
        "extend", iid
    )
    assert await b.ledger.get(iid) == before
    assert before is not None and before.expires_at == 3800.0


@pytest.mark.postgres
async def test_one_command_racing_over_two_replicas_applies_once(
    replicas: tuple[PostgresStores, PostgresStores],
) -> None:
    """The same resend, then the same cancel, sent to both replicas at once: one each applies."""
    a, b = replicas
    iid = await asked(a)
    for words, done in ((f"resend {iid}", results.Resent), (f"cancel {iid}", results.CancelDone)):
        outcomes: list[results.AdminResult] = await asyncio.gather(
            *(admin_of(s).handle(words, who=ROOT, key=words) for s in (a, b, a, b))
        )
        assert sorted(type(r).__name__ for r in outcomes) == sorted(
            [done.__name__, *["AlreadyDone"] * 3]
        )
    assert await reposts(a) == 1
    row = await b.ledger.get(iid)
    assert row is not None and row.status is QuestionStatus.CANCELLED
