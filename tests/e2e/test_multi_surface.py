"""One API question posted on Slack and Teams at once (issue 21, item 6), in a real process.

The bot process serves both surfaces: Slack through the loopback Web API,
Teams through the loopback Bot Framework connector (emulator mode, no
auth). A question with ``routes`` [slack, teams] is posted to both; the
first answer on either closes it and both messages are edited; a late
click on the other says it is closed and by whom. A resend posts it again on
both and points both old messages to their new ones.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.e2e._api import Api, api_env, approval
from tests.e2e._server import BotServer, StartBot
from tests.e2e._slack import ALICE, BOB, CHANNEL, SlackDriver, slack_bot, text_of
from tests.e2e._store import overdue
from tests.e2e._teams import ALICE as TEAMS_ALICE
from tests.e2e._teams import BOB as TEAMS_BOB
from tests.e2e._teams import TENANT, TeamsDriver, actions, card_of, execute, message, texts
from tests.e2e.test_slack_admin import hitl
from tests.fakes.bf_connector import Call as TeamsCall
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import TEAM, FakeSlack, buttons
from tests.fakes.slack_api import Call as SlackCall

pytestmark = pytest.mark.e2e

TEAMS_CHANNEL = "19:ops-channel@thread.tacv2"
CAROL = {"id": "29:carol", "name": "Carol", "aadObjectId": "ca701000-0000-4000-8000-000000000003"}
SUMMARY = "Deploy web 1.5 to prod"
ROUTES = [
    {"surface": "slack", "conversation": CHANNEL},
    {"surface": "teams", "conversation": TEAMS_CHANNEL},
]


class Both:
    """The bot process, driven as Slack and as Teams would, and its API."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        bot: BotServer,
        fake: FakeSlack,
        connector: FakeConnector,
    ) -> None:
        self.http = http
        self.bot = bot
        self.slack = SlackDriver(http, bot, fake)
        self.teams_driver = TeamsDriver(http, bot, connector)
        self.connector = connector
        self.api = Api(http, bot.url)

    async def teams(self, activity: dict[str, Any]) -> tuple[int, Any]:
        return await self.teams_driver.post(activity)

    async def seen_in_teams(self) -> None:
        """Someone writes in the Teams channel once: the bot keeps its conversation reference."""
        hello = message(
            self.connector.url, "hello", conversation=TEAMS_CHANNEL, kind="channel", mention=True
        )
        status, _ = await self.teams(hello)
        assert status == 201
        # The demo's reply is posted once: a failure a test scripts next is then its own post's.
        await self.connector.wait_for(self.connector.texts, what="the demo's reply")

    async def ask(self, key: str, **more: Any) -> dict[str, Any]:
        body = approval(key, ROUTES[0], **more)
        del body["route"]
        status, created = await self.api.ask({**body, "routes": ROUTES})
        assert status == 201, created
        return created

    def card_calls(self) -> list[TeamsCall]:
        return [c for c in self.connector.cards() if SUMMARY in str(texts(card_of(c.body)))]

    async def teams_card(self) -> TeamsCall:
        calls = await self.connector.wait_for(self.card_calls, what="the question's card")
        return calls[0]

    async def teams_click(
        self, card: TeamsCall, label: str, who: dict[str, str]
    ) -> tuple[int, Any]:
        action = next(a for a in actions(card_of(card.body)) if a["title"] == label)
        data = {**action["data"], "comment": ""}
        return await self.teams(
            execute(self.connector.url, data, who=who, conversation=TEAMS_CHANNEL, kind="channel")
        )

    async def approved_in_teams(self, card: TeamsCall, slack_message: SlackCall) -> dict[str, Any]:
        """Bob approves on the Teams ``card``: he is told, and both the card and the Slack
        message are edited to say so (the Slack one without buttons); the edited card."""
        status, reply = await self.teams_click(card, "Approve", TEAMS_BOB)
        assert status == 200
        assert any(t.startswith("Approved by Bob at ") for t in texts(reply["value"]))
        slack_edit = (await self.slack.edits_of(slack_message))[0]
        assert "Approved by Bob" in text_of(slack_edit) and not buttons(slack_edit.args)
        teams_edit = await self.connector.wait_for(
            lambda: self.connector.updates(card.activity_id), what="the card's edit"
        )
        edited = card_of(teams_edit[-1].body)
        assert any(t.startswith("Approved by Bob at ") for t in texts(edited))
        return edited

    async def expired(
        self, interrupt_id: str, slack_message: SlackCall, card: TeamsCall
    ) -> tuple[SlackCall, dict[str, Any]]:
        """The question expires now: the Slack message's edit and the edited card. The
        shortest TTL the API takes is a minute, so the store's expiry is brought forward
        instead, and the sweeper (every 0.2 s) expires it as it would after the minute."""
        await overdue(self.bot, interrupt_id)
        slack_edit = (await self.slack.edits_of(slack_message))[0]
        teams_edit = await self.connector.wait_for(
            lambda: self.connector.updates(card.activity_id), what="the expired card"
        )
        return slack_edit, card_of(teams_edit[-1].body)


@pytest.fixture
async def both(
    start_bot: StartBot, fake: FakeSlack, connector: FakeConnector, http: aiohttp.ClientSession
) -> Both:
    # Bob may use the admin commands (``resend``).
    env = {**api_env(), "BOT_SWEEP_SECONDS": "0.2", "BOT_ADMINS": f"slack:{TEAM}:{BOB}"}
    bot = await slack_bot(start_bot, fake, **env)
    driver = Both(http, bot, fake, connector)
    await driver.seen_in_teams()
    return driver


async def test_answered_in_teams_edits_the_slack_message_too(both: Both) -> None:
    created = await both.ask("two-places")
    assert [r["surface"] for r in created["routes"]] == ["slack", "teams"]
    assert created["route"] == {**ROUTES[0], "thread": None}
    posted = await both.slack.question()
    card = await both.teams_card()
    assert SUMMARY in text_of(posted) and buttons(posted.args)

    edited = await both.approved_in_teams(card, posted)
    assert "actions" not in edited

    status, _ = await both.slack.click(posted, "Approve", user=ALICE)
    assert status == 200
    late = (await both.slack.ephemeral(ALICE))[0].args["text"]
    assert late.startswith("This question was already answered by Bob at ")
    assert len(both.slack.fake.of("chat.update")) == 1  # the late click edits nothing
    status, reply = await both.teams_click(card, "Reject", CAROL)
    assert status == 200
    assert any(
        t.startswith("This question was already answered by Bob at ") for t in texts(reply["value"])
    )

    status, shown = await both.api.get(created["id"])
    assert status == 200 and shown["status"] == "answered"
    assert shown["answered_by"]["id"] == f"teams:{TENANT}:{TEAMS_BOB['aadObjectId']}"
    assert shown["delivery"]["status"] == "posted"


async def test_expiry_edits_both_messages_and_a_late_click_says_expired(both: Both) -> None:
    created = await both.ask("expiring")
    posted = await both.slack.question()
    card = await both.teams_card()
    slack_edit, edited_card = await both.expired(created["id"], posted, card)
    assert "Expired" in text_of(slack_edit) and not buttons(slack_edit.args)
    assert any(t.startswith("Expired at ") for t in texts(edited_card))

    status, reply = await both.teams_click(card, "Approve", CAROL)
    assert status == 200
    assert texts(reply["value"]) == [
        "This question has expired; ask the bot again to get a fresh one."
    ]
    status, _ = await both.slack.click(posted, "Approve", user=BOB)
    assert status == 200
    assert "has expired" in (await both.slack.ephemeral(BOB))[0].args["text"]
    status, shown = await both.api.get(created["id"])
    assert shown["status"] == "expired"


async def test_an_expiry_that_rejects_by_policy_says_so_on_both_messages(both: Both) -> None:
    """``on_expire: "reject"``: both messages say the expiry stood for a rejection, as the
    agent reads it."""
    created = await both.ask("fails-closed", policy={"on_expire": "reject"})
    posted = await both.slack.question()
    card = await both.teams_card()
    slack_edit, edited_card = await both.expired(created["id"], posted, card)
    assert "Expired without an answer: rejected, as its policy says." in text_of(slack_edit)
    (line,) = [t for t in texts(edited_card) if t.startswith("Expired at ")]
    assert line.endswith(" without an answer: rejected, as its policy says.")
    status, shown = await both.api.get(created["id"])
    assert status == 200 and shown["status"] == "expired"
    assert shown["answer"]["decision"] == "reject"


async def test_teams_answerers_are_named_as_seen_or_by_a_short_id_on_both_surfaces(
    both: Both,
) -> None:
    """Alice wrote in the Teams channel: the card names her; a Teams person the bot never saw
    shows by the start of their object id; Slack, which has seen neither, shows both so, and
    tells a Slack person who may not answer the same; no GUID pair anywhere."""
    guid = "3f2a9c1e-5a6b-4c8d-9e0f-123456789abc"
    alice = f"teams:{TENANT}:{TEAMS_ALICE['aadObjectId']}"
    await both.ask("teams-people", answerers=[alice, f"teams:{TENANT}:{guid}"])
    posted = await both.slack.question()
    card = await both.teams_card()
    audience = "Only Teams user 3f2a9c1e… or Teams user a11ce000… can answer this."
    assert audience in text_of(posted) and guid not in text_of(posted)
    footer = [t for t in texts(card_of(card.body)) if "can answer this" in t]
    assert footer and footer[0].startswith(
        "Asked for Alice. Only Teams user 3f2a9c1e… or Alice can answer this."
    )
    status, _ = await both.slack.click(posted, "Approve", user=ALICE)
    assert status == 200
    assert (await both.slack.ephemeral(ALICE))[0].args["text"] == audience


async def test_a_quorum_of_two_counts_one_slack_and_one_teams_approver(both: Both) -> None:
    created = await both.ask("quorum", policy={"quorum": 2})
    posted = await both.slack.question()
    card = await both.teams_card()

    status, _ = await both.slack.click(posted, "Approve", user=BOB)
    assert status == 200
    assert "1 of 2 approved" in (await both.slack.ephemeral(BOB))[0].args["text"]
    # The tally is shown live on both posts.
    redrawn = (await both.slack.edits_of(posted))[0]
    assert f"1 of 2 approved: <@{BOB}>" in text_of(redrawn) and buttons(redrawn.args)
    teams_redraw = await both.connector.wait_for(
        lambda: both.connector.updates(card.activity_id), what="the card's tally"
    )
    assert any("1 of 2 approved" in t for t in texts(card_of(teams_redraw[-1].body)))

    status, reply = await both.teams_click(card, "Approve", CAROL)
    assert status == 200
    # Both approvers are named, in the order they approved, each as their surface knows them.
    assert any(t.startswith("Approved by u0bob and Carol at ") for t in texts(reply["value"]))
    closed = (await both.slack.edits_of(posted, 2))[1]
    assert f"Approved by <@{BOB}> and @Carol at" in text_of(closed)
    assert not buttons(closed.args)

    status, shown = await both.api.get(created["id"])
    assert shown["status"] == "answered"
    assert shown["tally"]["approve"] == [
        f"slack:{TEAM}:{BOB}",
        f"teams:{TENANT}:{CAROL['aadObjectId']}",
    ]


async def test_a_reminder_is_threaded_on_each_post_naming_that_surfaces_people(
    both: Both,
) -> None:
    teams_alice = f"teams:{TENANT}:{TEAMS_ALICE['aadObjectId']}"
    await both.ask(
        "remind",
        answerers=[f"slack:{TEAM}:{BOB}", teams_alice],
        policy={"remind_after_seconds": 1, "max_reminders": 1},
    )
    posted = await both.slack.question()
    card = await both.teams_card()

    def reminder(c: Any) -> bool:
        return str(c.args.get("text")).startswith("Reminder:")

    slack_reminder = (await both.slack.fake.wait_for("chat.postMessage", where=reminder))[0]
    assert slack_reminder.args["text"] == (
        f"Reminder: <@{BOB}>, this question still waits for your answer."
    )
    assert slack_reminder.args["thread_ts"] == posted.response["ts"]
    teams_reminders = await both.connector.wait_for(
        lambda: [c for c in both.connector.posted() if "Reminder" in str(c.body.get("text"))],
        what="the Teams reminder",
    )
    (teams_reminder,) = teams_reminders
    assert teams_reminder.body["text"] == (
        "Reminder: <at>Alice</at>, this question still waits for your answer."
    )
    assert teams_reminder.body["replyToId"] == card.activity_id
    assert teams_reminder.conversation == f"{TEAMS_CHANNEL};messageid={card.activity_id}"


async def test_a_post_refused_on_one_surface_leaves_the_question_open_on_the_other(
    both: Both,
) -> None:
    both.slack.fake.fail("chat.postMessage", "not_in_channel")
    release = both.connector.hold_posts()
    created = await both.ask("slack-refuses")
    # The posts go out in order: once the Teams post is on its way, Slack's refusal has
    # been given up on, and the question was not cancelled for it.
    await both.connector.wait_for(lambda: both.connector.held, what="the Teams post")
    status, shown = await both.api.get(created["id"])
    assert shown["status"] == "open" and shown["delivery"]["status"] == "pending"
    release.set()
    card = await both.teams_card()
    status, reply = await both.teams_click(card, "Approve", TEAMS_BOB)
    assert any(t.startswith("Approved by Bob at ") for t in texts(reply["value"]))
    await both.connector.wait_for(
        lambda: both.connector.updates(card.activity_id), what="the card's edit"
    )
    status, shown = await both.api.get(created["id"])
    assert status == 200 and shown["status"] == "answered"
    assert shown["delivery"]["status"] == "posted"
    assert both.slack.fake.of("chat.update") == []  # never posted there: nothing to edit


async def test_a_question_no_surface_would_post_is_cancelled_with_the_last_reason(
    both: Both,
) -> None:
    both.slack.fake.fail("chat.postMessage", "not_in_channel")
    both.connector.fail_next(403)
    created = await both.ask("nobody-posts")
    status, closed = await both.api.get(created["id"], wait=30)
    assert status == 200 and closed["status"] == "cancelled", closed
    assert closed["cancel_reason"] and closed["delivery"]["status"] == "failed"


async def test_a_resend_posts_on_both_and_points_both_old_messages_to_the_new(
    both: Both,
) -> None:
    created = await both.ask("resent")
    posted = await both.slack.question()
    card = await both.teams_card()

    resent = await hitl(both.slack, f"resend {created['id']}")
    assert resent["text"].startswith(f"Posting {created['id']} again")
    again = await both.slack.question(2)
    cards = await both.connector.wait_for(
        lambda: both.card_calls()[1:], what="the question's second card"
    )
    new_card = cards[0]
    assert new_card.activity_id != card.activity_id and buttons(again.args)
    # Each old message, without its buttons, points to its own surface's new one.
    slack_moved = (await both.slack.edits_of(posted))[0]
    assert "posted again" in text_of(slack_moved) and not buttons(slack_moved.args)
    assert again.response["ts"].replace(".", "") in text_of(slack_moved)
    teams_moved = await both.connector.wait_for(
        lambda: both.connector.updates(card.activity_id), what="the old card's edit"
    )
    moved_card = card_of(teams_moved[-1].body)
    (moved,) = texts(moved_card)
    assert moved.startswith("This question was posted again:") and "actions" not in moved_card
    assert f"/{new_card.activity_id})" in moved

    # The new Teams card is the live one: its answer closes the question and edits both
    # new messages; the old messages keep their "posted again".
    await both.approved_in_teams(new_card, again)
    assert len(both.connector.updates(card.activity_id)) == 1
    assert len(await both.slack.edits_of(posted)) == 1
    status, shown = await both.api.get(created["id"])
    assert status == 200 and shown["status"] == "answered"
