"""``/hitl`` admin commands on a real bot process, signed as Slack signs a slash command."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from typing import Any

import aiohttp
import pytest

from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, BOB, CHANNEL, SlackDriver, slack_bot, text_of
from tests.fakes.slack_api import TEAM, Call, FakeSlack, buttons, mention, slash_command

pytestmark = pytest.mark.e2e

CAROL = "U0CAROL"
OPS_GROUP = "S0OPS"


async def admin_driver(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> SlackDriver:
    bot = await slack_bot(
        start_bot, fake, BOT_ADMINS=f"slack:{TEAM}:{BOB}", BOT_ADMIN_GROUPS=OPS_GROUP
    )
    return SlackDriver(http, bot, fake)


async def hitl(slack: SlackDriver, text: str, *, user: str = BOB) -> dict[str, Any]:
    """Send ``/hitl <text>`` as Slack does (form-encoded, signed); the ack's JSON body."""
    form = slash_command(text, user=user, channel=CHANNEL)
    status, body = await slack.post(form, content_type="application/x-www-form-urlencoded")
    assert status == 200, body
    reply: dict[str, Any] = json.loads(body)
    assert reply["response_type"] == "ephemeral"  # only the caller sees it
    return reply


def blocks_text(reply: dict[str, Any]) -> str:
    return json.dumps(reply.get("blocks", []), ensure_ascii=False) + str(reply.get("text"))


async def ask(slack: SlackDriver, ts: str, count: int = 1) -> tuple[Call, str]:
    assert await slack.event(mention("deploy web", user=ALICE, ts=ts)) == 200
    question = await slack.question(count)
    page = await hitl(slack, "pending")
    ids = re.findall(r"`(int_\w+)`", blocks_text(page))
    return question, ids[-1]


async def test_a_non_admin_is_refused_and_audited_a_group_member_is_an_admin(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Alice gets "admins only" (on record); Carol, in the admin user group, gets stats."""
    fake.group_members[OPS_GROUP] = [CAROL]
    slack = await admin_driver(start_bot, fake, http)
    refused = await hitl(slack, "pending", user=ALICE)
    assert refused["text"].startswith("Only admins can use that command")
    help_shown = await hitl(slack, "help", user=ALICE)
    assert "/hitl help" in blocks_text(help_shown) and "/hitl cancel" not in blocks_text(help_shown)
    assert "Admin commands are for the bot's admins." in blocks_text(help_shown)
    stats = await hitl(slack, "stats", user=CAROL)
    assert "*Issued*" in blocks_text(stats)
    conn = sqlite3.connect(slack.bot.folder / "bot.sqlite3")
    rows = conn.execute("SELECT kind, actor FROM audit WHERE kind LIKE 'admin%' ORDER BY id")
    events = list(rows)
    conn.close()
    assert events == [
        ("admin-refused", f"slack:{TEAM}:{ALICE}"),
        ("admin", f"slack:{TEAM}:{CAROL}"),
    ]


async def test_every_command_through_the_slash_command(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """pending, show, extend, resend (answered on the new message), stats, audit, history,
    help, cancel."""
    slack = await admin_driver(start_bot, fake, http)
    first, iid = await ask(slack, "1.000100")
    # Filters take people and channels as Slack sends them (escaped mentions).
    page = await hitl(slack, f"pending user=<@{ALICE}|alice> channel=<#{CHANNEL}|ops>")
    assert f"<@{ALICE}>" in blocks_text(page) and iid in blocks_text(page)
    nobody = await hitl(slack, f"pending user=<@{BOB}|bob>")
    assert nobody["text"] == "No open questions match."
    ts = first.response["ts"].replace(".", "")
    assert f"https://slack.com/archives/{CHANNEL}/p{ts}" in blocks_text(page)

    shown = await hitl(slack, f"show {iid}")
    assert "*Status:* outstanding" in blocks_text(shown)
    assert "#1 publish done" in blocks_text(shown)

    extended = await hitl(slack, f"extend {iid} 2h")
    assert "now expires at" in extended["text"]
    redrawn = (await slack.edits_of(first))[0]
    old_value = buttons(first.args)[0]["value"]
    assert buttons(redrawn.args) and buttons(redrawn.args)[0]["value"] != old_value

    resent = await hitl(slack, f"resend {iid}")
    assert resent["text"].startswith(f"Posting {iid} again")
    again = await slack.question(2)
    moved = await slack.fake.wait_for(
        "chat.update",
        where=lambda c: c.args["ts"] == first.response["ts"] and "posted again" in text_of(c),
    )
    assert again.response["ts"].replace(".", "") in text_of(moved[0])
    assert not buttons(moved[0].args)

    status, _ = await slack.click(again, "staging")
    assert status == 200
    answered = await slack.edits_of(again)
    assert f"Answered by <@{ALICE}>" in text_of(answered[0])
    # The first message's button carries the same single spend: already used.
    status, _ = await slack.click(first, "production")
    assert status == 200
    told = (await slack.ephemeral(ALICE))[0]
    assert "already answered by" in told.args["text"]

    stats = await hitl(slack, "stats")
    assert "*Answered*\\n1" in blocks_text(stats)
    run_id = blocks_text(shown).split("*Run:* `")[1].split("`")[0]
    audit = blocks_text(await hitl(slack, f"audit {run_id}"))
    assert audit.index(" extended ") < audit.index(" resent ") < audit.index(" answered ")
    # history's filters take people as Slack sends them too: Alice decided it.
    history = blocks_text(await hitl(slack, f"history status=answered by=<@{ALICE}|alice>"))
    assert iid in history and "answered by" in history
    none = await hitl(slack, f"history status=answered by=<@{BOB}|bob>")
    assert "No closed questions match." in blocks_text(none)
    assert "/hitl cancel" in blocks_text(await hitl(slack, "help"))
    closed = await hitl(slack, f"cancel {iid}")
    assert closed["text"] == f"Question '{iid}' is answered, not open; nothing changed."


async def test_a_cancel_racing_a_click_has_one_winner_and_both_people_are_told(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Bob's /hitl cancel and Alice's click land together: exactly one closes the question."""
    slack = await admin_driver(start_bot, fake, http)
    question, iid = await ask(slack, "2.000100")
    cancelled, (status, _) = await asyncio.gather(
        hitl(slack, f"cancel {iid} wrong service"), slack.click(question, "staging")
    )
    assert status == 200
    edited = (await slack.edits_of(question))[0]
    if cancelled["text"].startswith("Cancelled"):
        told = (await slack.ephemeral(ALICE))[0]
        assert f"cancelled by <@{BOB}>" in told.args["text"]
        assert "Cancelled by" in text_of(edited)
    else:
        assert cancelled["text"] == f"Question '{iid}' is answered, not open; nothing changed."
        assert f"Answered by <@{ALICE}>" in text_of(edited)
    conn = sqlite3.connect(slack.bot.folder / "bot.sqlite3")
    (closes,) = conn.execute(
        "SELECT COUNT(*) FROM audit WHERE interrupt_id = ? AND kind IN ('answered', 'cancelled')",
        (iid,),
    ).fetchone()
    conn.close()
    assert closes == 1
