"""Redeem's bounds: the row's expiry decides, and malformed tokens are refusals, never crashes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import jwt
import pytest

from bot.human import ASK_USER
from bot.human.tokens import SigningKey, TokenSigner
from bot.service.answering.outcomes import Redeemed, TokenExpired, TokenInvalid
from bot.stores import QuestionStatus, SqliteStores
from bot.stores.ports import Stores
from bot.testing import FixedClock, call, calls, question, say
from tests.support import Harness, HarnessFactory, steps

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
GOOD = {"answers": {"Which environment?": "staging"}}
SECRET = "r" * 48


@pytest.fixture
def signer() -> TokenSigner:
    """A known key, so these tests can sign tokens the service will verify."""
    return TokenSigner([SigningKey("k1", SECRET, SECRET)])


async def paused(harness: HarnessFactory, stores: Stores) -> Harness:
    h = harness(stores, [calls(ASK), say("deployed")])
    await h.start()
    return h


async def set_row_expiry(stores: Stores, db_path: Path, interrupt_id: str, at: float) -> None:
    """Move the ledger row's expiry without touching the token (an admin's edit, say)."""
    if not isinstance(stores, SqliteStores):
        # PostgreSQL: the lifecycle's extend step moves the expiry either way.
        record = await stores.ledger.get(interrupt_id)
        assert record is not None
        assert await steps(stores).extend(interrupt_id, expires_at=at, at=at, actor="test")
        return
    with sqlite3.connect(db_path) as conn:
        changed = conn.execute(
            "UPDATE pauses SET expires_at = ? WHERE interrupt_id = ?", (at, interrupt_id)
        ).rowcount
    assert changed == 1


async def assert_outstanding(h: Harness) -> None:
    interrupt = h.surface.questions[-1][1]
    row = await h.stores.ledger.get(interrupt.interrupt_id)
    assert row is not None and row.status is QuestionStatus.OUTSTANDING and row.answer is None


async def test_the_rows_expiry_decides_even_when_the_token_is_still_good(
    harness: HarnessFactory, stores: Stores, db_path: Path, clock: FixedClock
) -> None:
    """A row that expired before the token's exp refuses the answer, spending nothing."""
    h = await paused(harness, stores)
    interrupt = h.surface.questions[-1][1]
    assert interrupt.expires_at > clock() + 3600
    await set_row_expiry(stores, db_path, interrupt.interrupt_id, clock() - 1)
    refused = await h.answer(GOOD)
    assert isinstance(refused, TokenExpired) and refused.expired_at == clock() - 1
    await assert_outstanding(h)


async def test_the_tokens_expiry_still_decides_when_the_row_is_later(
    harness: HarnessFactory, stores: Stores, db_path: Path, clock: FixedClock
) -> None:
    """A row extended past the token's exp does not revive the token."""
    h = await paused(harness, stores)
    interrupt = h.surface.questions[-1][1]
    await set_row_expiry(stores, db_path, interrupt.interrupt_id, interrupt.expires_at + 3600)
    clock.now = interrupt.expires_at
    assert isinstance(await h.answer(GOOD), TokenExpired)
    await assert_outstanding(h)
    clock.now = interrupt.expires_at - 1
    assert isinstance(await h.answer(GOOD), Redeemed)


def resigned(token: str, **changes: object) -> str:
    """The real token's claims, changed and signed again with the service's key."""
    data = jwt.decode(token, options={"verify_signature": False})
    data.update(changes)
    return jwt.encode(data, SECRET, algorithm="HS256", headers={"kid": "k1"})


WRONG_TYPES = {
    "exp as a string": {"exp": "99999999999"},
    "jti as a number": {"jti": 42},
    "scope as a list": {"scope": ["T1"]},
    "sub as an object": {"sub": {"run": 1}},
    "checkpoint as null": {"checkpoint": None},
}


@pytest.mark.parametrize("changes", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
async def test_a_claim_of_the_wrong_type_is_token_invalid_at_redeem(
    harness: HarnessFactory, sqlite_stores: Stores, changes: dict[str, Any]
) -> None:
    """Correctly signed with a mistyped claim: TokenInvalid, no exception, nothing spent."""
    h = await paused(harness, sqlite_stores)
    token = resigned(h.surface.last_token, **changes)
    assert isinstance(await h.answer(GOOD, token=token), TokenInvalid)
    await assert_outstanding(h)
    assert isinstance(await h.answer(GOOD), Redeemed)


async def test_a_non_canonical_signature_is_token_invalid_at_redeem(
    harness: HarnessFactory, sqlite_stores: Stores
) -> None:
    """The same signature bytes spelled with other spare bits is not the issued token."""
    h = await paused(harness, sqlite_stores)
    token = h.surface.last_token
    head, signature = token.rsplit(".", 1)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    twin = f"{head}.{signature[:-1]}{alphabet[alphabet.index(signature[-1]) ^ 1]}"
    assert twin != token
    assert isinstance(await h.answer(GOOD, token=twin), TokenInvalid)
    await assert_outstanding(h)


async def test_a_reader_that_crashes_is_a_refusal_not_an_exception(
    harness: HarnessFactory, sqlite_stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    """A deployment's decode_token that raises something odd still yields TokenInvalid,
    and what it quoted of the token in its error is not logged."""
    h = await paused(harness, sqlite_stores)

    def brittle(token: str) -> Any:
        raise ValueError(f"cannot parse {token}")

    h.capability.decode_token = brittle
    assert isinstance(await h.answer(GOOD, token="opaque-secret-value"), TokenInvalid)
    await assert_outstanding(h)
    assert "ValueError" in caplog.text  # the formatted records, tracebacks included
    assert "opaque-secret-value" not in caplog.text
