"""One log line per step of a run, with run and pause ids and never a token."""

from __future__ import annotations

import logging

import pytest

from bot.human import ASK_USER
from bot.service.answering.outcomes import Responder
from bot.stores.ports import Stores
from bot.testing import call, calls, question, say
from tests.support import REQUESTER, HarnessFactory

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
GOOD = {"answers": {"Which environment?": "staging"}}


def events(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "bot.run_events"]


async def test_a_run_logs_each_step_with_its_ids(
    harness: HarnessFactory, sqlite_stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    """started, asked, refused, answered (by whom), resumed, completed: ids on each, no token."""
    caplog.set_level(logging.INFO, logger="bot.run_events")
    h = harness(sqlite_stores, [calls(ASK), say("deployed")])
    run_id = await h.start()
    token = h.surface.last_token
    interrupt_id = h.surface.questions[-1][1].interrupt_id
    await h.service.redeem(
        token, {"answers": {"Which environment?": "mars"}}, responder=REQUESTER, scope="T1"
    )
    await h.service.redeem(token, GOOD, responder=REQUESTER, scope="T1")
    await h.service.wait_idle()

    seen = [(r.event, r.run_id, r.interrupt_id) for r in events(caplog)]  # type: ignore[attr-defined]
    assert seen == [
        ("started", run_id, ""),
        ("asked", run_id, interrupt_id),
        ("refused", run_id, interrupt_id),
        ("answered", run_id, interrupt_id),
        ("resumed", run_id, interrupt_id),
        ("completed", run_id, ""),
    ]
    answered = next(r for r in events(caplog) if r.event == "answered")  # type: ignore[attr-defined]
    assert answered.by == "Alice"  # type: ignore[attr-defined]
    refused = next(r for r in events(caplog) if r.event == "refused")  # type: ignore[attr-defined]
    assert refused.reason == "AnswerInvalid"  # type: ignore[attr-defined]
    for record in events(caplog):
        assert token not in str(vars(record))
        assert run_id in record.getMessage()


async def test_expired_cancelled_and_failed_runs_say_so(
    harness: HarnessFactory, sqlite_stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    """An expiry, a cancellation (by whom) and a failure each log their own event."""
    caplog.set_level(logging.INFO, logger="bot.run_events")
    # Two questions, then the script runs dry: the second resume fails the run.
    h = harness(sqlite_stores, [calls(ASK), calls(ASK)])
    run_id = await h.start()
    first = h.surface.questions[-1][1].interrupt_id
    h.service.clock.advance(10 * 24 * 3600)  # type: ignore[attr-defined]
    assert await h.service.sweep() == 1
    await h.service.wait_idle()
    second = h.surface.questions[-1][1].interrupt_id
    assert await h.service.cancel(second, by=Responder("admin", "Root"))
    await h.service.wait_idle()

    seen = [(r.event, r.interrupt_id) for r in events(caplog)]  # type: ignore[attr-defined]
    assert ("expired", first) in seen
    assert ("cancelled", second) in seen
    assert seen[-1] == ("failed", "")
    cancelled = next(r for r in events(caplog) if r.event == "cancelled")  # type: ignore[attr-defined]
    assert cancelled.by == "Root"  # type: ignore[attr-defined]
    assert all(r.run_id == run_id for r in events(caplog))  # type: ignore[attr-defined]
