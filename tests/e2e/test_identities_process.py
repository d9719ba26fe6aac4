"""One person, one spelling, on a real ``python -m bot`` driven over HTTP as an attacker would.

Each test tries what was possible before: an email address spelt another way (or listing a
second inbox) to vote twice or to approve one's own request, a Teams id no click can carry
as the requester, and the same Slack user clicking in a second workspace to approve their
own request or to vote twice. Each runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest

from tests.e2e._api import Api, api_env, approval
from tests.e2e._server import BotServer, StartBot, json_lines
from tests.e2e._slack import ALICE, BOB, CHANNEL, SlackDriver, slack_bot, text_of
from tests.e2e._teams import ALICE as TEAMS_ALICE
from tests.e2e._teams import BOB as TEAMS_BOB
from tests.e2e._teams import TENANT, TeamsDriver, actions, card_of, execute, texts
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import (
    TEAM,
    Call,
    FakeSlack,
    action_of,
    block_actions,
    buttons,
    posted_message,
)
from tests.fakes.smtp import SmtpFake
from tests.stores._postgres import fresh_schema

pytestmark = pytest.mark.e2e

KEYS = "k1:" + "i" * 48
OTHER_TEAM = "T0OTHER"
OTHER_CHANNEL = "C0THERE"
CAROL = "U0CAROL"
TEAMS_CHANNEL = "19:ops-channel@thread.tacv2"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, str]]:
    """The bot's store: its own SQLite file, or a PostgreSQL schema of this test's own (a
    test names it first, so the schema is dropped only after the bot is stopped)."""
    if request.param == "sqlite":
        yield {}
        return
    async with fresh_schema() as url:
        yield {"DATABASE_URL": url, "BOT_SIGNING_KEYS": KEYS}


@pytest.fixture
def smtp() -> Iterator[SmtpFake]:
    fake = SmtpFake().start()
    yield fake
    fake.stop()


def _clean(bot: BotServer) -> None:
    """Nothing in the process's log at ERROR level, and no traceback."""
    log = bot.log_text()
    assert "Traceback" not in log
    assert not [r for r in json_lines(log) if r.get("level") in {"error", "critical"}]


async def _nothing_asked(api: Api) -> None:
    status, listed = await api.call("GET", "/v1/questions")
    assert status == 200 and listed["data"] == [], listed


def _to(address: str) -> dict[str, str]:
    return {"surface": "email", "conversation": address}


async def test_an_inbox_spelt_another_way_or_listing_another_is_a_400_and_nothing_is_mailed(
    store: dict[str, str],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    smtp: SmtpFake,
) -> None:
    """Ana twice in one quorum, Ana approving her own request through a quoted spelling, one
    route mailing two inboxes, an address no mail can reach: each a 400 naming the field and
    saying how to write it; nothing is stored or mailed."""
    env = api_env(BOT_SMTP_URL=smtp.url, BOT_EMAIL_FROM="bridge@bridge.example", **store)
    bot = await start_bot(**env)
    api = Api(http, bot.url)
    twice = approval(
        "twice",
        _to("ana@example.com"),
        answerers=["email:ana@example.com", 'email:"ana"@example.com'],
        policy={"quorum": 2},
    )
    del twice["route"]
    twice["routes"] = [_to("ana@example.com"), _to('"ana"@example.com')]
    attempts: list[tuple[dict[str, Any], str]] = [
        (twice, "routes: the email route '\"ana\"@example.com' is not one plain address"),
        (
            approval(
                "own",
                _to('"ana"@example.com'),
                answerers=['email:"ana"@example.com'],
                policy={"requester": "email:ana@example.com", "requester_may_answer": False},
            ),
            "route: the email route '\"ana\"@example.com' is not one plain address",
        ),
        (
            approval(
                "own-answerer",
                _to("ana@example.com"),
                answerers=["email:<ana@example.com>", "email:bo@example.com"],
                policy={"requester": "email:ana@example.com", "requester_may_answer": False},
            ),
            "answerers.0: 'email:<ana@example.com>' is not one plain email address; "
            "write email: and one plain address, such as email:ana@example.com",
        ),
    ]
    for n, address in enumerate(
        [
            "ana@example.com,eve@evil.example",
            "mailto:ana@example.com",
            "ana(x)@example.com",
            "ana@example.com\\",
            "ana@example.com.",
            "ana@example..com",
        ]
    ):
        body = approval(f"one-{n}", _to(address), answerers=[f"email:{address}"])
        said = f"route: the email route {address!r} is not one plain address; give each "
        attempts.append((body, said + "recipient a route of its own, such as ana@example.com"))
    for body, said in attempts:
        status, refused = await api.ask(body)
        assert status == 400, refused
        assert refused["error"]["code"] == "invalid_request"
        assert refused["error"]["message"].startswith(said), refused
    await _nothing_asked(api)
    # The one plain spelling is taken, lowercased.
    console = {"surface": "console", "conversation": "ops"}
    answerers = ["email:ANA@Example.com", "email:bo@example.com"]
    created = await api.created(approval("plain", console, answerers=answerers))
    assert created["answerers"] == ["email:ana@example.com", "email:bo@example.com"]
    assert smtp.taken() == []
    _clean(bot)


async def test_a_teams_requester_no_click_can_carry_is_a_400_and_an_uppercase_one_is_kept_out(
    store: dict[str, str],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    connector: FakeConnector,
) -> None:
    """A requester in braces, without dashes, with a suffix or a tenant that is no GUID is a
    400 saying how to write it; Teams' GUIDs in uppercase are Alice, whose click is refused."""
    bot = await start_bot(**api_env(**store))
    api = Api(http, bot.url)
    teams = TeamsDriver(http, bot, connector)
    await teams.say("hello", conversation=TEAMS_CHANNEL, kind="channel", mention=True)
    route = {"surface": "teams", "conversation": TEAMS_CHANNEL}
    aad = TEAMS_ALICE["aadObjectId"]
    for n, requester in enumerate(
        [
            f"teams:{TENANT}:{{{aad}}}",
            f"teams:{TENANT}:{aad.replace('-', '')}",
            f"teams:{TENANT}:{aad}:x",
            f"teams:contoso:{aad}",
        ]
    ):
        body = approval(
            f"typo-{n}", route, policy={"requester": requester, "requester_may_answer": False}
        )
        status, refused = await api.ask(body)
        assert status == 400, refused
        said = refused["error"]["message"]
        assert said.startswith(f"policy.requester: {requester!r} is not a Teams user id; ")
        assert "write teams:<tenant id>:<aad object id>, both GUIDs" in said
    await _nothing_asked(api)

    upper = f"teams:{TENANT.upper()}:{aad.upper()}"
    policy = {"requester": upper, "requester_may_answer": False}
    created = await api.created(approval("upper", route, policy=policy))
    assert created["policy"]["requester"] == f"teams:{TENANT}:{aad}"
    card = (await connector.wait_for(connector.cards, what="the question's card"))[0]
    approve = next(a for a in actions(card_of(card.body)) if a["title"] == "Approve")
    data = {**approve["data"], "comment": ""}
    for who, said in ((TEAMS_ALICE, "only someone else"), (TEAMS_BOB, "Approved by Bob at ")):
        activity = execute(connector.url, data, who=who, conversation=TEAMS_CHANNEL, kind="channel")
        status, reply = await teams.post(activity)
        assert status == 200 and said in " ".join(texts(reply["value"])), reply
    status, shown = await api.get(created["id"])
    assert shown["answered_by"]["id"] == f"teams:{TENANT}:{TEAMS_BOB['aadObjectId']}"
    _clean(bot)


async def _posted_in_two_workspaces(
    api: Api, slack: SlackDriver, key: str, **more: Any
) -> tuple[str, Call, Call]:
    """An approval posted in this workspace's channel and in another's: its id, both posts."""
    routes = [
        {"surface": "slack", "conversation": f"{TEAM}:{CHANNEL}"},
        {"surface": "slack", "conversation": f"{OTHER_TEAM}:{OTHER_CHANNEL}"},
    ]
    body = approval(key, routes[0], **more)
    del body["route"]
    created = await api.created({**body, "routes": routes})
    here, there = await slack.question(), await slack.question(2)
    if here.args["channel"] != CHANNEL:
        here, there = there, here
    return created["id"], here, there


async def _click_there(slack: SlackDriver, posted: Call, label: str, user: str) -> tuple[int, str]:
    """``user`` presses ``label`` on the other workspace's post, as Slack signs it from there."""
    button = next(b for b in buttons(posted.args) if b["text"]["text"] == label)
    payload = block_actions(
        action_of(button),
        user=user,
        message=posted_message(posted),
        channel=OTHER_CHANNEL,
        team=OTHER_TEAM,
    )
    return await slack.interact(payload)


async def _bob_approves_there(api: Api, slack: SlackDriver, question: str, there: Call) -> None:
    """Bob approves on the other workspace's post: it is edited, and the question is
    answered by Bob as that workspace names him."""
    status, _ = await _click_there(slack, there, "Approve", BOB)
    assert status == 200
    await slack.edits_of(there)
    status, shown = await api.get(question)
    assert shown["status"] == "answered"
    assert shown["answered_by"]["id"] == f"slack:{OTHER_TEAM}:{BOB}"


async def test_the_slack_requester_clicking_in_another_workspace_is_still_the_requester(
    store: dict[str, str],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    fake: FakeSlack,
) -> None:
    """Alice asked (``requester_may_answer: false``): her Approve in a second workspace is
    refused as hers and changes nothing; Bob's approves."""
    bot = await slack_bot(start_bot, fake, **api_env(**store))
    api = Api(http, bot.url)
    slack = SlackDriver(http, bot, fake)
    policy = {"requester": f"slack:{TEAM}:{ALICE}", "requester_may_answer": False}
    question, _, there = await _posted_in_two_workspaces(api, slack, "own", policy=policy)

    status, _ = await _click_there(slack, there, "Approve", ALICE)
    assert status == 200
    told = (await slack.ephemeral(ALICE))[0].args["text"]
    assert "only someone else" in told and "nothing changed" in told
    status, shown = await api.get(question)
    assert shown["status"] == "open" and shown["answer"] is None, shown

    await _bob_approves_there(api, slack, question, there)
    _clean(bot)


async def test_a_slack_user_approving_in_two_workspaces_is_one_vote(
    store: dict[str, str],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    fake: FakeSlack,
) -> None:
    """Under a quorum of two, Bob approving here and again in the other workspace is one
    vote ("You already answered"); Carol's approval closes it, naming Bob once."""
    bot = await slack_bot(start_bot, fake, **api_env(**store))
    api = Api(http, bot.url)
    slack = SlackDriver(http, bot, fake)
    question, here, there = await _posted_in_two_workspaces(
        api, slack, "quorum", policy={"quorum": 2}
    )

    status, _ = await slack.click(here, "Approve", user=BOB)
    assert status == 200
    assert "1 of 2 approved" in (await slack.ephemeral(BOB))[0].args["text"]
    status, _ = await _click_there(slack, there, "Approve", BOB)
    assert status == 200
    assert "You already answered" in (await slack.ephemeral(BOB, 2))[1].args["text"]
    status, shown = await api.get(question)
    assert shown["status"] == "open", shown
    assert shown["tally"] == {"approve": [f"slack:{TEAM}:{BOB}"], "reject": []}

    status, _ = await slack.click(here, "Approve", user=CAROL)
    assert status == 200
    # The redraw of Bob's vote may be folded into the close's edit: wait for the close.
    closed = await fake.wait_for(
        "chat.update",
        where=lambda c: c.args["ts"] == here.response["ts"] and "Approved by" in text_of(c),
    )
    assert f"Approved by <@{BOB}> and <@{CAROL}> at" in text_of(closed[0])
    status, shown = await api.get(question)
    assert shown["status"] == "answered"
    assert shown["answer"]["approved_by"] == [f"slack:{TEAM}:{BOB}", f"slack:{TEAM}:{CAROL}"]
    _clean(bot)


async def test_a_slack_answerer_named_in_one_workspace_may_answer_from_another(
    store: dict[str, str],
    start_bot: StartBot,
    http: aiohttp.ClientSession,
    fake: FakeSlack,
) -> None:
    """Bob named as slack:<this team>:U0BOB is Bob in the other workspace too; Carol is not
    named and is refused."""
    bot = await slack_bot(start_bot, fake, **api_env(**store))
    api = Api(http, bot.url)
    slack = SlackDriver(http, bot, fake)
    question, _, there = await _posted_in_two_workspaces(
        api, slack, "named", answerers=[f"slack:{TEAM}:{BOB}"]
    )
    status, _ = await _click_there(slack, there, "Approve", CAROL)
    assert status == 200
    assert (await slack.ephemeral(CAROL))[0].args["text"] == f"Only <@{BOB}> can answer this."
    await _bob_approves_there(api, slack, question, there)
    _clean(bot)
