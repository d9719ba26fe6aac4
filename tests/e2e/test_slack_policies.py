"""Approval policies on a real process answering the Slack loopback: quorum, no self-approval."""

from __future__ import annotations

import json
import sqlite3

import aiohttp
import pytest

from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, BOB, SlackDriver, slack_bot, text_of
from tests.e2e._store import all_delivered
from tests.fakes.slack_api import Call, FakeSlack, buttons

pytestmark = pytest.mark.e2e

DEPLOYED = "Deployed web 1.5.0 to staging"
CAROL = "U0CAROL"


def policies(**approval: object) -> dict[str, str]:
    return {
        "BOT_POLICIES": json.dumps({"approval": approval}),
        "SLACK_ANSWERERS": "approval=anyone",
    }


async def approval_of(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession, **env: str
) -> tuple[SlackDriver, Call]:
    slack = SlackDriver(http, await slack_bot(start_bot, fake, **env), fake)
    return slack, await slack.approval()


async def test_the_requester_cannot_approve_their_own_deploy(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    slack, approval = await approval_of(
        start_bot, fake, http, **policies(requester_may_answer=False)
    )
    status, _ = await slack.click(approval, "Approve", user=ALICE)
    assert status == 200
    told = (await slack.ephemeral(ALICE))[0]
    assert "only someone else" in told.args["text"] and "nothing changed" in told.args["text"]
    status, _ = await slack.click(approval, "Approve", user=BOB)
    assert status == 200
    edited = (await slack.edits_of(approval))[0]
    assert f"Approved by <@{BOB}>" in text_of(edited) and not buttons(edited.args)
    await slack.reply(DEPLOYED)


async def one_of_two_approved(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> tuple[SlackDriver, Call]:
    """An approval that needs two approvers, which Bob has approved."""
    slack, approval = await approval_of(start_bot, fake, http, **policies(quorum=2))
    await slack.click(approval, "Approve", user=BOB)
    return slack, approval


async def test_a_quorum_of_two_counts_each_person_once(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    slack, approval = await one_of_two_approved(start_bot, fake, http)
    assert "1 of 2 approved" in (await slack.ephemeral(BOB))[0].args["text"]
    redrawn = (await slack.edits_of(approval))[0]
    assert f"1 of 2 approved: <@{BOB}>" in text_of(redrawn) and buttons(redrawn.args)
    await slack.click(approval, "Approve", user=BOB)
    assert "You already answered" in (await slack.ephemeral(BOB, 2))[1].args["text"]
    await slack.click(approval, "Approve", user=CAROL)
    closed = (await slack.edits_of(approval, 2))[1]
    # Every approver of the quorum is named, not only the one who completed it.
    assert f"Approved by <@{BOB}> and <@{CAROL}> at" in text_of(closed)
    assert not buttons(closed.args)
    await slack.reply(DEPLOYED)


async def test_one_reject_rejects_a_quorum(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    slack, approval = await one_of_two_approved(start_bot, fake, http)
    await slack.edits_of(approval)  # the tally's redraw
    await slack.click(approval, "Reject…", user=CAROL)
    view = (await fake.wait_for("views.open"))[0].args["view"]
    comment = {"comment": {"answer": {"type": "plain_text_input", "value": "not today"}}}
    status, _ = await slack.submit(view, comment, user=CAROL)
    assert status == 200
    closed = (await slack.edits_of(approval, 2))[1]
    assert f"Rejected by <@{CAROL}>" in text_of(closed) and "not today" in text_of(closed)
    await slack.reply("Rejected (not today)")


async def test_a_kill_between_two_approvals_loses_neither_and_resumes_once(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    slack, approval = await one_of_two_approved(start_bot, fake, http)
    await slack.edits_of(approval)  # counted and committed: the redraw went out
    # ... and marked so: a kill before the mark redelivers it once the dead
    # process's claim lapses, which this test is not about.
    await all_delivered(slack.bot)
    assert slack.bot.kill() != 0
    await slack.bot.restart()
    status, _ = await slack.click(approval, "Approve", user=CAROL)
    assert status == 200
    closed = [c for c in await slack.edits_of(approval, 2) if "Approved by" in text_of(c)]
    assert f"Approved by <@{BOB}> and <@{CAROL}> at" in text_of(closed[0])
    await slack.reply(DEPLOYED)
    with sqlite3.connect(slack.bot.folder / "bot.sqlite3") as db:
        (answer,) = db.execute("SELECT answer FROM pauses WHERE name = 'approval'").fetchone()
        (votes,) = db.execute("SELECT COUNT(*) FROM votes").fetchone()
    approved_by = json.loads(answer)["approved_by"]
    assert approved_by == [f"slack:{approved_by[0].split(':')[1]}:{BOB}", approved_by[1]]
    assert approved_by[1].endswith(CAROL) and votes == 2
    finals = [
        c
        for c in fake.calls
        if c.method == "chat.postMessage" and DEPLOYED in str(c.args.get("text"))
    ]
    assert len(finals) == 1


async def test_one_reminder_in_the_thread_then_an_escalation_ping_and_none_after_the_answer(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    env = {
        "BOT_POLICIES": json.dumps(
            {
                "approval": {
                    "remind_after_seconds": 1,
                    "escalate": [{"after_seconds": 2, "answerers": ["U0DAN"]}],
                }
            }
        ),
        "BOT_ANSWERERS": f"approval={BOB}",
        "BOT_SWEEP_SECONDS": "0.2",
    }
    slack, approval = await approval_of(start_bot, fake, http, **env)

    def nudges(c: Call) -> bool:
        text = str(c.args.get("text"))
        return text.startswith(("Reminder:", "Escalated")) and not buttons(c.args)

    reminder, ping = await fake.wait_for("chat.postMessage", 2, where=nudges)
    assert (
        reminder.args["text"] == f"Reminder: <@{BOB}>, this question still waits for your answer."
    )
    assert reminder.args["thread_ts"] == approval.args["thread_ts"]
    assert ping.args["text"].startswith("Escalated to level 1: <@U0DAN>")
    # The step redraws the question with its level, buttons kept.
    leveled = (await slack.edits_of(approval))[0]
    assert "Escalated to level 1." in text_of(leveled) and buttons(leveled.args)
    # It says who may answer now, and a stranger who clicks is told the same.
    assert f"Only <@{BOB}> or <@U0DAN> can answer this." in text_of(leveled)
    await slack.click(approval, "Approve", user=CAROL)
    told = (await slack.ephemeral(CAROL))[0]
    assert told.args["text"] == f"Only <@{BOB}> or <@U0DAN> can answer this."
    status, _ = await slack.click(approval, "Approve", user="U0DAN")  # the step admitted Dan
    assert status == 200
    assert "Approved by <@U0DAN>" in text_of((await slack.edits_of(approval, 2))[1])
    await slack.reply(DEPLOYED)
    posted = [c for c in fake.calls if c.method == "chat.postMessage" and nudges(c)]
    assert len(posted) == 2  # one reminder, one ping; nothing once closed
