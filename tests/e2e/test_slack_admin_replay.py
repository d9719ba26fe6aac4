"""An admin command, its process SIGKILLed, the same request replayed after restart.

The restarted process has no memory of the request; the store has: the
replay record (how the first request was answered) and the command's
idempotency key, written with its effect. Whichever the kill left, the
effect is applied exactly once and never lost.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from tests.e2e._server import BotServer, StartBot
from tests.e2e._slack import BOB, CHANNEL, SlackDriver, slack_bot, text_of
from tests.e2e._store import all_delivered, count, query
from tests.e2e._teams import BOB as TEAMS_BOB
from tests.e2e._teams import TENANT, card_of, texts
from tests.e2e._teams import message as teams_message
from tests.e2e.test_slack_admin import ask
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import TEAM, FakeSlack, buttons, sign, slash_command

pytestmark = pytest.mark.e2e

CAROL = "U0CAROL"
OPS_GROUP = "S0OPS"
FORM = "application/x-www-form-urlencoded"
LEASE = 3.0
# A liveness deadline for the store to show what the bot acknowledged; never asserted.
SETTLE_SECONDS = 15.0


async def driver(start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession) -> SlackDriver:
    fake.group_members[OPS_GROUP] = [CAROL]
    bot = await slack_bot(
        start_bot,
        fake,
        BOT_ADMINS=f"slack:{TEAM}:{BOB}",
        BOT_ADMIN_GROUPS=OPS_GROUP,
        # Rows the killed process had claimed are delivered by the next once its claim lapses.
        BOT_LEASE_SECONDS=str(LEASE),
        BOT_SWEEP_SECONDS="0.5",
    )
    return SlackDriver(http, bot, fake)


class Signed:
    """One slash command, signed once: every send of it is the same request."""

    def __init__(self, text: str, *, user: str) -> None:
        self.body = slash_command(text, user=user, channel=CHANNEL)
        self.headers = {"Content-Type": FORM, **sign(self.body)}

    async def send(self, http: aiohttp.ClientSession, bot: BotServer) -> tuple[int, str]:
        url = f"{bot.url}/slack/events"
        async with http.post(url, data=self.body.encode(), headers=self.headers) as response:
            return response.status, await response.text()


def expiry(bot: BotServer, iid: str) -> float:
    ((expires_at,),) = query(bot, "SELECT expires_at FROM pauses WHERE interrupt_id = ?", iid)
    return float(expires_at)  # type: ignore[arg-type]


async def test_killed_mid_command_the_replay_applies_it_once(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Killed while the command waits on Slack (before its effect, unanswered): the replay
    after restart applies it, once; a second replay is answered as the first and moves nothing."""
    slack = await driver(start_bot, fake, http)
    _, iid = await ask(slack, "3.000100")
    before = expiry(slack.bot, iid)
    # Carol is an admin through her user group: the command asks Slack first, and waits there.
    gate = fake.hold("usergroups.users.list")
    command = Signed(f"extend {iid} 1h", user=CAROL)
    first = asyncio.ensure_future(command.send(http, slack.bot))
    await fake.wait_for("usergroups.users.list")
    slack.bot.kill()
    with pytest.raises(aiohttp.ClientError):
        await first
    gate.set()
    assert expiry(slack.bot, iid) == before  # nothing was applied before the kill
    await slack.bot.restart()

    status, replayed = await command.send(http, slack.bot)
    assert status == 200, replayed
    assert "now expires at" in json.loads(replayed)["text"]
    assert expiry(slack.bot, iid) == before + 3600
    assert await command.send(http, slack.bot) == (200, replayed)
    assert expiry(slack.bot, iid) == before + 3600
    extended = "SELECT COUNT(*) FROM audit WHERE interrupt_id = ? AND kind = 'extended'"
    assert count(slack.bot, extended, iid) == 1


async def test_killed_right_after_the_ack_the_replay_changes_nothing(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Acked, then killed at once: the replay to the restarted process gets the first answer,
    the expiry moved once, and the redraw the command owed still reaches Slack."""
    slack = await driver(start_bot, fake, http)
    question, iid = await ask(slack, "4.000100")
    before = expiry(slack.bot, iid)
    command = Signed(f"extend {iid} 1h", user=BOB)
    status, answered = await command.send(http, slack.bot)
    assert status == 200 and "now expires at" in answered
    slack.bot.kill()
    await slack.bot.restart()

    assert await command.send(http, slack.bot) == (200, answered)
    assert expiry(slack.bot, iid) == before + 3600
    # Redrawn (by the first process or, its claim lapsed, the next) with the new expiry's token.
    redrawn = await slack.edits_of(question)
    assert buttons(redrawn[-1].args)[0]["value"] != buttons(question.args)[0]["value"]
    extended = "SELECT COUNT(*) FROM audit WHERE interrupt_id = ? AND kind = 'extended'"
    assert count(slack.bot, extended, iid) == 1


async def test_a_resend_replayed_to_the_restarted_process_posts_once(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """One repost owed and posted; the same signed resend after a SIGKILL and restart owes none."""
    slack = await driver(start_bot, fake, http)
    _, iid = await ask(slack, "5.000100")
    command = Signed(f"resend {iid}", user=BOB)
    status, answered = await command.send(http, slack.bot)
    assert status == 200 and json.loads(answered)["text"].startswith(f"Posting {iid} again")
    await slack.question(2)
    await all_delivered(slack.bot)
    owed = count(slack.bot, "SELECT COUNT(*) FROM outbox")
    slack.bot.kill()
    await slack.bot.restart()

    assert await command.send(http, slack.bot) == (200, answered)
    assert count(slack.bot, "SELECT COUNT(*) FROM outbox") == owed  # nothing more owed
    reposts = "SELECT COUNT(*) FROM outbox WHERE kind = 'publish' AND body LIKE '%repost%'"
    assert count(slack.bot, reposts) == 1
    posted = [c for c in fake.of("chat.postMessage") if buttons(c.args)]
    assert len(posted) == 2, [text_of(c) for c in posted]
    # A resend typed anew (signed anew) is a new command, and does post again.
    fresh = slash_command(f"resend {iid}", user=BOB, channel=CHANNEL, trigger_id="trig-2")
    assert (await slack.post(fresh, content_type=FORM))[0] == 200
    await slack.question(3)


async def test_teams_killed_between_the_effect_and_the_reply_the_replay_is_refused_as_done(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """The extend is written, the reply held at the connector, the process SIGKILLed: the
    same activity sent to the restarted process (no memory of it) finds its key in the
    store, says it was done, and moves nothing."""
    admin = f"teams:{TENANT}:{TEAMS_BOB['aadObjectId']}"
    bot = await start_bot(BOT_ADMINS=admin, BOT_LEASE_SECONDS=str(LEASE), BOT_SWEEP_SECONDS="0.5")

    async def send(activity: dict[str, object]) -> int:
        async with http.post(f"{bot.url}/api/messages", json=activity) as response:
            return response.status

    assert await send(teams_message(connector.url, "deploy web")) == 201
    await connector.wait_for(connector.cards, what="the question's card")
    ((iid,),) = query(bot, "SELECT interrupt_id FROM pauses")
    before = expiry(bot, str(iid))
    command = teams_message(
        connector.url, f"extend {iid} 1h", who=TEAMS_BOB, conversation="a:1personal-bob"
    )
    gate = connector.hold_posts()
    first = asyncio.ensure_future(send(command))
    await connector.wait_for(lambda: connector.held, what="the reply to the extend")
    assert expiry(bot, str(iid)) == before + 3600  # the effect is written
    bot.kill()
    with pytest.raises(aiohttp.ClientError):
        await first
    gate.set()
    await bot.restart()

    assert await send(command) == 201
    replies = await connector.wait_for(
        lambda: [t for c in connector.cards() for t in texts(card_of(c.body)) if "already" in t],
        what="the reply to the replay",
    )
    assert replies == [f"That extend of {iid} was already done; nothing changed again."]
    assert expiry(bot, str(iid)) == before + 3600
    extended = "SELECT COUNT(*) FROM audit WHERE interrupt_id = ? AND kind = 'extended'"
    assert count(bot, extended, iid) == 1
