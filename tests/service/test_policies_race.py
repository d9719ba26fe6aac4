"""A quorum under racing answers: each person counted once, the question closed and resumed once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.contract.answers import answer_json
from bot.contract.models import Policy
from bot.interactions.approval import approval_registration, approval_tool
from bot.service.answering.outcomes import AlreadyAnswered, Counted, Redeemed, Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.stores import QuestionStatus, Stores
from bot.stores.postgres import PostgresStores
from bot.testing import call, calls, say
from tests.support import WHERE, Harness, HarnessFactory

ASK = call("approval", action="deploy", summary="Deploy to production")
APPROVE = {"decision": "approve", "comment": ""}
QUORUM_3 = {"approval": Policy(quorum=3)}


def replica(harness: HarnessFactory, stores: Stores, script: list[Any]) -> Harness:
    return harness(
        stores,
        script,
        tools=[approval_tool()],
        registrations=[approval_registration()],
        policy=RequesterOrApprovers(anyone=True),
        policies=QUORUM_3,
    )


async def race(hs: list[Harness], token: str, n: int) -> list[Any]:
    async def one(i: int) -> Any:
        who = Responder(f"test:u{i}", f"u{i}")
        return await hs[i % len(hs)].service.redeem(
            token, APPROVE, responder=who, scope=WHERE.scope
        )

    outcomes = await asyncio.gather(*(one(i) for i in range(n)))
    for h in hs:
        await h.service.wait_idle()
    return list(outcomes)


def assert_counted_once(outcomes: list[Any]) -> None:
    kinds = [type(o) for o in outcomes]
    assert kinds.count(Redeemed) == 1
    assert kinds.count(Counted) == 2
    assert kinds.count(AlreadyAnswered) == len(outcomes) - 3


async def test_racing_approvals_on_one_sqlite_file_count_three(
    harness: HarnessFactory, sqlite_stores: Stores
) -> None:
    h = replica(harness, sqlite_stores, [calls(ASK), say("done")])
    await h.start()
    assert_counted_once(await race([h], h.surface.last_token, 50))
    row = await sqlite_stores.ledger.get(h.surface.questions[-1][1].interrupt_id)
    assert row is not None and row.status is QuestionStatus.ANSWERED
    assert len(answer_json(row.answer)["approved_by"]) == 3 and len(row.tally.approve) == 3
    assert len(h.provider.calls) == 2  # asked, then resumed once


@pytest.mark.postgres
async def test_200_approvals_over_two_replicas_count_exactly_three_and_resume_once(
    harness: HarnessFactory, replicas: tuple[PostgresStores, PostgresStores]
) -> None:
    a, b = replicas
    first = replica(harness, a, [calls(ASK), say("done")])
    second = replica(harness, b, [say("done")])
    await first.start()
    iid = first.surface.questions[-1][1].interrupt_id
    assert_counted_once(await race([first, second], first.surface.last_token, 200))
    row = await b.ledger.get(iid)
    assert row is not None and row.status is QuestionStatus.ANSWERED
    assert (
        len(answer_json(row.answer)["approved_by"]) == 3
        and len(set(answer_json(row.answer)["approved_by"])) == 3
    )
    assert row.tally is not None and row.tally.approve == answer_json(row.answer)["approved_by"]
    votes = await a._db.fetchval("SELECT COUNT(*) FROM votes WHERE interrupt_id = $1", iid)
    assert votes == 3
    # Asked once on the first replica; resumed once, by whichever closed it.
    assert len(first.provider.calls) + len(second.provider.calls) == 2
