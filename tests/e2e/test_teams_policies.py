"""Approval policies on Teams: quorum, no self-approval, a reminder, an escalation step, expiry."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from bot.service.running.runs import RUN_SERVICE
from tests.e2e._teams import (
    ALICE,
    BOB,
    TENANT,
    StartApp,
    TeamsBotApp,
    actions,
    card_of,
    execute,
    message,
    texts,
)
from tests.fakes.bf_connector import Call, FakeConnector

pytestmark = pytest.mark.e2e

CAROL = {"id": "29:carol", "name": "Carol", "aadObjectId": "ca701000-0000-4000-8000-000000000003"}


async def test_a_quorum_of_two_on_teams(tmp_path: Path, teams_sdk: str) -> None:
    connector = await FakeConnector().start()
    bot = await TeamsBotApp(
        tmp_path / "bot",
        BOT_ANYONE_MAY_ANSWER=True,
        BOT_POLICIES=json.dumps({"approval": {"quorum": 2}}),
    ).start()
    try:
        call, data = await approval_card(bot, connector)
        assert "0 of 2 approved" in texts(card_of(call.body))
        status, reply = await bot.post(execute(connector.url, data, who=BOB))
        assert status == 200
        assert "1 of 2 approved: @Bob" in texts(reply["value"]) and "actions" in reply["value"]
        status, reply = await bot.post(execute(connector.url, data, who=BOB))
        assert any("You already answered" in t for t in texts(reply["value"]))
        status, reply = await bot.post(execute(connector.url, data, who=CAROL))
        # The quorum's closing names both approvers, not only the last.
        assert any(t.startswith("Approved by Bob and Carol at ") for t in texts(reply["value"]))
        final = await connector.wait_for(
            lambda: [t for t in connector.texts() if t.startswith("Deployed")], what="final reply"
        )
        assert len(final) == 1
    finally:
        await bot.close()
        await connector.close()


DAN = {"id": "29:dan", "name": "Dan", "aadObjectId": "da400000-0000-4000-8000-000000000004"}
DAN_ID = f"teams:{TENANT}:{DAN['aadObjectId']}"
APPROVE = "Approve"


def policy(**approval: object) -> str:
    return json.dumps({"approval": approval})


async def approval_card(bot: TeamsBotApp, connector: FakeConnector) -> tuple[Call, dict[str, Any]]:
    """Alice asks for a deploy and picks staging: the approval card's call and its Approve data."""
    status, _ = await bot.post(message(connector.url, "deploy web"))
    assert status == 201
    first = (await connector.wait_for(connector.cards, what="question card"))[0]
    staging = actions(card_of(first.body))[0]
    status, _ = await bot.post(execute(connector.url, {**staging["data"]}))
    assert status == 200
    call = (await connector.wait_for(lambda: connector.cards()[1:], what="approval card"))[0]
    approve = next(a for a in actions(card_of(call.body)) if a["title"] == APPROVE)
    return call, {**approve["data"], "comment": ""}


def stored(folder: Path, sql: str) -> tuple[Any, ...]:
    with sqlite3.connect(folder / "bot.sqlite3") as db:
        row: tuple[Any, ...] = db.execute(sql).fetchone()
    return row


async def swept(
    start_app: StartApp, connector: FakeConnector, policies: str, prefix: str
) -> tuple[TeamsBotApp, Call, dict[str, Any], list[str]]:
    """An approval card under ``policies``, one sweep a second and a half later, and the
    texts it owed that start with ``prefix``; also the bot, the card's call and its Approve.

    The sweeper's pass is driven here, a second ahead: no background pass, no waiting.
    """
    bot = await start_app(BOT_POLICIES=policies, BOT_SWEEP_SECONDS=3600, BOT_LEASE_SECONDS=3600)
    call, approve = await approval_card(bot, connector)
    service = bot.app[RUN_SERVICE]
    assert await service.nudges.sweep(time.time() + 1.5) == 1
    service.deliverer.kick()  # as the sweeper's pass does after it
    owed = await connector.wait_for(lambda: posted_starting(connector, prefix), what=prefix)
    return bot, call, approve, owed


def posted_starting(connector: FakeConnector, prefix: str) -> list[str]:
    return [t for t in connector.texts() if t.startswith(prefix)]


async def test_the_requester_is_refused_and_nothing_is_counted(
    tmp_path: Path, start_app: StartApp, connector: FakeConnector
) -> None:
    bot = await start_app(
        BOT_ANYONE_MAY_ANSWER=True, BOT_POLICIES=policy(quorum=2, requester_may_answer=False)
    )
    call, approve = await approval_card(bot, connector)
    status, reply = await bot.post(execute(connector.url, approve, who=ALICE))
    assert status == 200
    told = " ".join(texts(reply["value"]))
    assert "only someone else" in told and "nothing changed" in told
    assert stored(bot.folder, "SELECT COUNT(*) FROM votes") == (0,)
    (tally,) = stored(bot.folder, "SELECT tally FROM pauses WHERE name = 'approval'")
    assert not (json.loads(tally) if tally else {}).get("approve")
    assert connector.updates(call.activity_id) == []  # no redraw: nothing changed
    status, reply = await bot.post(execute(connector.url, approve, who=BOB))
    assert status == 200
    assert "1 of 2 approved: @Bob" in texts(reply["value"])  # Bob's is the first counted
    status, reply = await bot.post(execute(connector.url, approve, who=CAROL))
    assert any(t.startswith("Approved by Bob and Carol at ") for t in texts(reply["value"]))
    await connector.wait_for(lambda: posted_starting(connector, "Deployed"), what="final reply")


async def test_one_reminder_before_the_answer_and_none_after(
    tmp_path: Path, start_app: StartApp, connector: FakeConnector
) -> None:
    bot, _, approve, reminders = await swept(
        start_app, connector, policy(remind_after_seconds=1, max_reminders=2), "Reminder:"
    )
    # Alice by name, as a real mention: never her raw aadObjectId.
    assert reminders == ["Reminder: <at>Alice</at>, this question still waits for your answer."]
    (reminder,) = [c for c in connector.posted() if str(c.body.get("text")).startswith("Remind")]
    assert reminder.body["entities"] == [
        {
            "type": "mention",
            "text": "<at>Alice</at>",
            "mentioned": {"id": ALICE["id"], "name": "Alice"},
        }
    ]
    assert reminder.body["replyToId"]  # in reply to the posted card
    status, reply = await bot.post(execute(connector.url, approve))
    assert status == 200
    assert any(t.startswith("Approved by Alice at ") for t in texts(reply["value"]))
    await connector.wait_for(lambda: posted_starting(connector, "Deployed"), what="final reply")
    # A sweep long after a second reminder would be due owes nothing: the question is closed.
    assert await bot.app[RUN_SERVICE].nudges.sweep(time.time() + 3600) == 0
    assert stored(bot.folder, "SELECT reminders FROM pauses WHERE name = 'approval'") == (1,)
    assert len(posted_starting(connector, "Reminder:")) == 1


async def test_the_first_escalation_step_pings_once_and_raises_the_level(
    tmp_path: Path, start_app: StartApp, connector: FakeConnector
) -> None:
    escalate = [{"after_seconds": 1, "answerers": [DAN_ID]}]
    bot, call, approve, pings = await swept(
        start_app, connector, policy(escalate=escalate), "Escalated"
    )
    # Dan's name was never seen: counted, not shown as his aadObjectId.
    assert pings == ["Escalated to level 1: 1 more person may answer this question now."]
    assert not any("aad-" in t for t in connector.texts())
    # The card is redrawn with the level, as the Slack message is.
    redrawn = await connector.wait_for(lambda: connector.updates(call.activity_id), what="redraw")
    assert "Escalated to level 1." in texts(card_of(redrawn[-1].body))
    # It names who may answer now: the requester, and the one the step added.
    footer = " ".join(texts(card_of(redrawn[-1].body)))
    assert "Only Alice or Teams user da400000… can answer this." in footer
    assert "Only Alice can answer this." in " ".join(texts(card_of(call.body)))
    assert stored(bot.folder, "SELECT level FROM pauses WHERE name = 'approval'") == (1,)
    assert stored(bot.folder, "SELECT COUNT(*) FROM audit WHERE kind = 'escalated'") == (1,)
    # No second step: a sweep an hour on owes nothing more.
    assert await bot.app[RUN_SERVICE].nudges.sweep(time.time() + 3600) == 0
    status, reply = await bot.post(execute(connector.url, approve, who=DAN))  # Dan admitted
    assert status == 200
    assert any(t.startswith("Approved by Dan at ") for t in texts(reply["value"]))
    await connector.wait_for(lambda: posted_starting(connector, "Deployed"), what="final reply")
    assert len(posted_starting(connector, "Escalated")) == 1
    assert stored(bot.folder, "SELECT COUNT(*) FROM audit WHERE kind = 'escalated'") == (1,)


async def test_expiry_edits_the_card_and_a_late_click_says_it_expired(
    start_app: StartApp, connector: FakeConnector
) -> None:
    # Five seconds: the staging pick, a click after the card arrives, beats the first expiry.
    bot = await start_app(
        BOT_POLICIES=policy(on_expire="reject"), BOT_TTL_SECONDS=5, BOT_SWEEP_SECONDS=0.2
    )
    call, approve = await approval_card(bot, connector)
    edited = await connector.wait_for(
        lambda: connector.updates(call.activity_id), what="expired card", seconds=20
    )
    card = card_of(edited[-1].body)
    assert any(t.startswith("Expired at ") for t in texts(card)) and "actions" not in card
    status, reply = await bot.post(execute(connector.url, approve))
    assert status == 200
    assert texts(reply["value"]) == [
        "This question has expired; ask the bot again to get a fresh one."
    ]
    assert len(connector.updates(call.activity_id)) == len(edited)  # the late click edits nothing
    final = await connector.wait_for(connector.texts, what="final reply")
    assert final == ["No decision arrived, so I did not deploy web: it expired unanswered."]
