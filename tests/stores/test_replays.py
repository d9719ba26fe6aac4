"""The shared replay record and commands' idempotency keys, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.contract.answers import OtherAnswer
from bot.questions.lifecycle import Lifecycle
from bot.questions.write import ONCE_KEY_SECONDS
from bot.stores import Closing, QuestionStatus, Stores
from bot.stores._replays import PRUNE_EVERY
from bot.stores.ports import Seen, StoredResponse
from tests.stores.test_store_contract import pause, run

ANSWER = StoredResponse(200, b'{"ok":true,"bytes":"\xc3\xa9"}', "application/json")


async def count(stores: Stores, table: str) -> int:
    db: Any = stores._db  # type: ignore[attr-defined]  # both backends keep their Statements so
    rows = await db.rows(f"SELECT COUNT(*) AS n FROM {table}")  # noqa: S608 - a test's own names
    return int(rows[0]["n"])


async def test_a_request_is_first_once_and_its_replays_get_the_first_answer(
    stores: Stores,
) -> None:
    """First claim wins; a claim before the answer learns nothing; after it, the answer."""
    replays = stores.replays
    assert await replays.claim("sig-1", now=10.0, until=610.0) == Seen(first=True)
    assert await replays.claim("sig-1", now=11.0, until=611.0) == Seen(first=False)
    await replays.settle("sig-1", ANSWER)
    assert await replays.claim("sig-1", now=12.0, until=612.0) == Seen(False, ANSWER)
    # A second settle (a replay that ran anyway) does not rewrite the first answer.
    await replays.settle("sig-1", StoredResponse(400, b"no", None))
    assert await replays.claim("sig-1", now=13.0, until=613.0) == Seen(False, ANSWER)
    assert await replays.claim("sig-2", now=13.0, until=613.0) == Seen(first=True)


async def test_a_failed_first_request_lets_its_resend_be_the_first(stores: Stores) -> None:
    """Settled with no answer, the record is gone: the next claim is first again."""
    replays = stores.replays
    assert (await replays.claim("sig-1", now=10.0, until=610.0)).first
    await replays.settle("sig-1", None)
    assert (await replays.claim("sig-1", now=11.0, until=611.0)).first


async def test_expired_records_are_taken_over_and_pruned(stores: Stores) -> None:
    """Past its window a request is new again; every PRUNE_EVERY-th first claim prunes
    every expired record, so the table holds one window and that many more at most."""
    replays = stores.replays
    for n in range(5):
        assert (await replays.claim(f"old-{n}", now=10.0, until=20.0)).first
    await replays.settle("old-0", ANSWER)
    assert await count(stores, "seen_requests") == 5
    assert (await replays.claim("old-0", now=20.0, until=30.0)).first  # its window has passed
    assert await replays.claim("old-0", now=21.0, until=31.0) == Seen(first=False)
    for n in range(PRUNE_EVERY):
        assert (await replays.claim(f"new-{n}", now=22.0, until=32.0)).first
    # The four expired records are gone; old-0's second window and the new ones stay.
    assert await count(stores, "seen_requests") == PRUNE_EVERY + 1


async def test_a_keyed_write_applies_once_and_is_refused_whole_after(stores: Stores) -> None:
    """The same key twice: one extension, one audit event, one redraw owed; the key is on
    record; another key applies again."""
    lifecycle = Lifecycle(stores.unit)
    assert await lifecycle.start(run())
    record = pause(run_id="run-1")
    assert await lifecycle.ask(record) is not None
    assert not await stores.replays.applied("k1")
    first = await lifecycle.extend(record, expires_at=300.0, at=120.0, actor="root", once_key="k1")
    assert first is not None and first.question is not None
    assert first.question.expires_at == 300.0
    moved = dataclasses.replace(record, expires_at=300.0)
    again = await lifecycle.extend(moved, expires_at=400.0, at=121.0, actor="root", once_key="k1")
    assert again is None
    assert await stores.replays.applied("k1")
    row = await stores.ledger.get(record.interrupt_id)
    assert row is not None and row.expires_at == 300.0
    extended = [e for e in await stores.audit.recent(run_id="run-1") if e.kind == "extended"]
    assert len(extended) == 1
    refreshes = [d for d in await stores.outbox.of_run("run-1") if d.kind == "refresh"]
    assert len(refreshes) == 1
    assert await lifecycle.repost(moved, at=122.0, actor="root", once_key="k1") is None
    assert await lifecycle.repost(moved, at=122.0, actor="root", once_key="k2") is not None


async def test_a_keyed_write_its_guard_refuses_keeps_no_key(stores: Stores) -> None:
    """A cancel of a closed question changes nothing, key included: a later try may run."""
    lifecycle = Lifecycle(stores.unit)
    assert await lifecycle.start(run())
    record = pause(run_id="run-1")
    await lifecycle.ask(record)
    answered = Closing(
        QuestionStatus.ANSWERED, by="alice", at=150.0, answer=OtherAnswer({"choice": "yes"})
    )
    assert await lifecycle.close(record.interrupt_id, answered) is not None
    cancel = Closing(QuestionStatus.CANCELLED, by="root", at=151.0)
    assert await lifecycle.close(record.interrupt_id, cancel, once_key="k1") is None
    assert not await stores.replays.applied("k1")


async def test_expired_keys_are_pruned_and_free_again(stores: Stores) -> None:
    """Keys last ``ONCE_KEY_SECONDS``; a keyed write after that prunes them."""
    lifecycle = Lifecycle(stores.unit)
    assert await lifecycle.start(run())
    record = pause(run_id="run-1", expires_at=10 * ONCE_KEY_SECONDS)
    await lifecycle.ask(record)
    for n in range(3):
        assert await lifecycle.repost(record, at=100.0, actor="root", once_key=f"k{n}")
    assert await count(stores, "once_keys") == 3
    later = 101.0 + ONCE_KEY_SECONDS
    assert await lifecycle.repost(record, at=later, actor="root", once_key="k0") is not None
    assert await count(stores, "once_keys") == 1
