"""Reminders and escalation steps, on a fixed clock: each sent once, none after the close."""

from __future__ import annotations

from typing import Any

from bot.service.answering.outcomes import Counted, NotAllowedToAnswer, Redeemed, Responder
from bot.service.answering.policy import RequesterOrApprovers, parse_rules
from bot.stores.ports import Stores
from bot.testing import FixedClock
from tests.support import Harness, HarnessFactory, paused_on_approval

APPROVE = {"decision": "approve", "comment": ""}
BOB = Responder("test:bob", "bo")
CAROL = Responder("test:carol", "cy")
DAN = Responder("test:dan", "dan")


async def paused(harness: HarnessFactory, stores: Stores, **policy: Any) -> Harness:
    only = RequesterOrApprovers(rules=parse_rules("approval=test:bob test:carol"))
    return await paused_on_approval(harness, stores, policy, answerers=only)


async def sweep(h: Harness) -> list[dict[str, Any]]:
    """One sweeper pass and its deliveries; the nudges posted in it."""
    before = len(h.surface.nudges)
    await h.service.sweep()
    h.service.deliverer.kick()
    await h.service.wait_idle()
    return [nudge for _, nudge in h.surface.nudges[before:]]


async def test_one_reminder_after_the_delay_and_none_after_the_answer(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    h = await paused(harness, stores, remind_after_seconds=60)
    clock.advance(59)
    assert await sweep(h) == []
    clock.advance(2)
    (reminder,) = await sweep(h)
    assert reminder["kind"] == "reminded"
    assert reminder["people"] == ["test:bob", "test:carol"]
    clock.advance(600)
    assert await sweep(h) == []  # max_reminders defaults to 1
    assert (await h.last_row()).reminders == 1
    assert isinstance(await h.answer(APPROVE, who=BOB), Redeemed)


async def test_reminders_repeat_up_to_the_maximum_and_skip_who_answered(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    h = await paused(harness, stores, remind_after_seconds=60, max_reminders=2, quorum=2)
    assert isinstance(await h.answer(APPROVE, who=BOB), Counted)
    clock.advance(61)
    assert [n["people"] for n in await sweep(h)] == [["test:carol"]]
    clock.advance(60)
    assert [n["people"] for n in await sweep(h)] == [["test:carol"]]
    clock.advance(600)
    assert await sweep(h) == []


async def test_a_reminder_skips_a_slack_voter_who_answered_from_another_workspace(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    """Named in one workspace, Bo approved from another: he is not reminded; Cy is."""
    rule = "approval=anyone slack:T0TEST:U0BO slack:T0TEST:U0CY"
    only = RequesterOrApprovers(rules=parse_rules(rule))
    policy = {"remind_after_seconds": 60, "quorum": 2}
    h = await paused_on_approval(harness, stores, policy, answerers=only)
    bo_there = Responder("slack:T0OTHER:U0BO", "bo")
    assert isinstance(await h.answer(APPROVE, who=bo_there), Counted)
    clock.advance(61)
    assert [n["people"] for n in await sweep(h)] == [["slack:T0TEST:U0CY"]]


async def test_no_reminder_once_closed(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    h = await paused(harness, stores, remind_after_seconds=60)
    assert isinstance(await h.answer(APPROVE, who=BOB), Redeemed)
    clock.advance(61)
    assert await sweep(h) == []
    kinds = [e.kind for e in await h.stores.audit.recent(run_id=(await h.last_row()).run_id)]
    assert "reminded" not in kinds


async def test_the_first_escalation_step_pings_its_answerers_once_and_admits_them(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    ladder = [{"after_seconds": 30, "answerers": ["test:dan"]}]
    h = await paused(harness, stores, escalate=ladder)
    assert isinstance(await h.answer(APPROVE, who=DAN), NotAllowedToAnswer)
    clock.advance(31)
    (ping,) = await sweep(h)
    assert ping["kind"] == "escalated" and ping["level"] == 1 and ping["people"] == ["test:dan"]
    row = await h.last_row()
    assert row.level == 1 and row.reminders == 0
    clock.advance(600)
    assert await sweep(h) == []
    kinds = [e.kind for e in await h.stores.audit.recent(run_id=row.run_id)]
    assert kinds.count("escalated") == 1
    assert isinstance(await h.answer(APPROVE, who=DAN), Redeemed)
