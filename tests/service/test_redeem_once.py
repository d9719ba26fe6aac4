"""An answer's request key (a Slack click's): written with its outcome, so the same request
again is ``Replayed``, changing nothing, whatever the first outcome was; on both backends."""

from __future__ import annotations

from typing import Any

from bot.service.answering import outcomes
from bot.stores import QuestionStatus
from bot.stores.ports import Stores
from tests.service.test_policies import APPROVE, BOB, CAROL, _resumes, paused
from tests.support import REQUESTER, HarnessFactory


async def _kinds(h: Any) -> list[str]:
    row = await h.last_row()
    return [e.kind for e in await h.stores.audit.recent(run_id=row.run_id)]


async def test_a_spent_answer_sent_again_with_its_key_is_replayed(
    harness: HarnessFactory, stores: Stores
) -> None:
    h = await paused(harness, stores)
    assert isinstance(await h.answer(APPROVE, who=BOB, once_key="click-1"), outcomes.Redeemed)
    audited = await _kinds(h)
    assert await h.answer(APPROVE, who=BOB, once_key="click-1") == outcomes.Replayed()
    assert await _kinds(h) == audited and _resumes(h) == 1
    # Another request (a second click) is still told the question was answered.
    assert isinstance(
        await h.answer(APPROVE, who=BOB, once_key="click-2"), outcomes.AlreadyAnswered
    )
    assert (await _kinds(h)).count("refused") == audited.count("refused") + 1


async def test_a_refused_answer_sent_again_with_its_key_is_replayed(
    harness: HarnessFactory, stores: Stores
) -> None:
    h = await paused(harness, stores, requester_may_answer=False)
    assert isinstance(
        await h.answer(APPROVE, who=REQUESTER, once_key="click-1"), outcomes.SelfApproval
    )
    audited = await _kinds(h)
    assert audited.count("refused") == 1
    assert await h.answer(APPROVE, who=REQUESTER, once_key="click-1") == outcomes.Replayed()
    assert await _kinds(h) == audited
    assert await stores.replays.applied("click-1")


async def test_a_forged_token_sent_again_with_its_key_is_replayed(
    harness: HarnessFactory, stores: Stores
) -> None:
    h = await paused(harness, stores)
    forged = h.surface.last_token[:-4] + "AAAA"
    assert isinstance(await h.answer(APPROVE, token=forged, once_key="k"), outcomes.TokenInvalid)
    assert await h.answer(APPROVE, token=forged, once_key="k") == outcomes.Replayed()
    refused = [e for e in await stores.audit.recent() if e.kind == "refused"]
    assert len(refused) == 1


async def test_a_vote_sent_again_with_its_key_is_replayed(
    harness: HarnessFactory, stores: Stores
) -> None:
    h = await paused(harness, stores, quorum=2)
    assert await h.answer(APPROVE, who=BOB, once_key="click-1") == outcomes.Counted(
        "approve", 1, 0, 2
    )
    audited = await _kinds(h)
    assert await h.answer(APPROVE, who=BOB, once_key="click-1") == outcomes.Replayed()
    assert await _kinds(h) == audited
    assert (await h.last_row()).status is QuestionStatus.OUTSTANDING
    assert isinstance(await h.answer(APPROVE, who=BOB, once_key="click-2"), outcomes.AlreadyVoted)
    # The deciding vote, keyed, closes it once; its replay changes nothing.
    assert isinstance(await h.answer(APPROVE, who=CAROL, once_key="click-3"), outcomes.Redeemed)
    assert await h.answer(APPROVE, who=CAROL, once_key="click-3") == outcomes.Replayed()
    assert (await _kinds(h)).count("answered") == 1 and _resumes(h) == 1


async def test_a_retryable_request_refused_then_sent_again_corrected_is_recorded(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The link page's key: a refusal leaves it unused, so the corrected answer under the same
    key counts, as a vote and as the deciding close; only then is a resend ``Replayed``."""
    h = await paused(harness, stores, quorum=2)
    typo = {"decision": "aprove", "comment": ""}
    refused = await h.answer(typo, who=BOB, once_key="page-1", retryable=True)
    assert isinstance(refused, outcomes.AnswerInvalid)
    assert not await stores.replays.applied("page-1")
    assert (await _kinds(h)).count("refused") == 1
    counted = await h.answer(APPROVE, who=BOB, once_key="page-1", retryable=True)
    assert counted == outcomes.Counted("approve", 1, 0, 2)
    again = await h.answer(APPROVE, who=BOB, once_key="page-1", retryable=True)
    assert again == outcomes.Replayed()
    assert isinstance(
        await h.answer(typo, who=CAROL, once_key="page-2", retryable=True), outcomes.AnswerInvalid
    )
    closed = await h.answer(APPROVE, who=CAROL, once_key="page-2", retryable=True)
    assert isinstance(closed, outcomes.Redeemed)
    assert await h.answer(APPROVE, who=CAROL, once_key="page-2", retryable=True) == (
        outcomes.Replayed()
    )
    assert (await _kinds(h)).count("answered") == 1 and _resumes(h) == 1
