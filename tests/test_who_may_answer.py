"""Who may answer, decided once and drawn alike on Slack, Teams and the console.

Four kinds of question: a chat question under a per-interaction rule
(``BOT_ANSWERERS``) whose policy keeps the requester out (``BOT_POLICIES``),
an API question naming its answerers, one asked of ``anyone``, and one an
escalation step has opened to one more person. Each surface shows the
sentence of ``RequesterOrApprovers.who_may_answer``, each person in its own
markup, and the admin's ``pending`` and ``show`` list the same people; the
redeem's check admits exactly those (``tests/test_policy.py``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.console._views import Viewer
from adapters.slack._surface import SlackSurface
from adapters.teams import TeamsSurface
from adapters.teams._connector import Connector
from bot.admin import AdminService, results
from bot.contract.payloads import payload_of
from bot.questions.quorum import stored_policy
from bot.questions.records import ApiRequest, Question, RunRecord, RunStatus
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import RequesterOrApprovers, parse_rules
from bot.stores import Stores
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack
from tests.support import steps

APPROVAL = {"action": "deploy", "summary": "ship web 1.5"}


def kinds(requester: str, bo: str, cy: str, dan: str) -> dict[str, Question]:
    """The four kinds of question, asked in a run ``requester`` started."""
    del requester  # the rule names the requester as ``requester``; the policy keeps them out
    asked = Question(
        "i1", "r1", "s", "approval", "c1", "cp1", payload_of("approval", APPROVAL), 0.0, 1.8e9
    )
    return {
        "rule": dataclasses.replace(asked, policy=stored_policy({"requester_may_answer": False})),
        "named": dataclasses.replace(asked, answerers=(bo, cy)),
        "anyone": dataclasses.replace(asked, answerers=("anyone",)),
        "escalated": dataclasses.replace(
            asked,
            answerers=(bo,),
            policy=stored_policy({"escalate": [{"after_seconds": 60, "answerers": [dan]}]}),
            level=1,
        ),
    }


def policy(bo: str, cy: str) -> RequesterOrApprovers:
    """``BOT_ANSWERERS=approval=<bo> <cy> requester``."""
    return RequesterOrApprovers(rules=parse_rules(f"approval={bo} {cy} requester"))


async def published(
    surface: SlackSurface | TeamsSurface, run: RunRecord, people: tuple[str, ...]
) -> None:
    """The four kinds posted on ``surface`` in ``run``, each drawn with whom ``policy``
    admits (``people``: the requester, then Bo, Cy and Dan as that surface names them)."""
    decides = policy(*people[1:3])
    for record in kinds(*people).values():
        may = decides.who_may_answer(record, run.requester)
        await surface.publish_question(run, record, token="t", may=may)


def said(bo: str, cy: str, dan: str) -> dict[str, str]:
    """The sentence each kind is drawn with, on every surface, Bo, Cy and Dan named as that
    surface names them."""
    return {
        "rule": f"Only {bo} or {cy} can answer this.",
        "named": f"Only {bo} or {cy} can answer this.",
        "anyone": "Anyone here can answer this.",
        "escalated": f"Only {bo} or {dan} can answer this.",
    }


# Slack ----------------------------------------------------------------------------------

SLACK_RUN = RunRecord(
    "r1",
    "T1:C1",
    "slack",
    "slack:T1:U0ANA",
    "deploy web",
    0.0,
    conversation={"reference": {"team": "T1", "channel": "C1", "thread_ts": "1.1"}},
)
SLACK_PEOPLE = ("slack:T1:U0ANA", "slack:T1:U0BO", "slack:T1:U0CY", "slack:T1:U0DAN")


@pytest.fixture
async def slack() -> AsyncIterator[tuple[FakeSlack, SlackSurface]]:
    fake = await FakeSlack().start()
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=fake.api_url, session=session)

        async def client_for(team: str) -> AsyncWebClient:
            return client

        yield fake, SlackSurface(client_for=client_for)
    await fake.close()


async def test_slack_shows_who_may_answer_as_decided(
    slack: tuple[FakeSlack, SlackSurface],
) -> None:
    """The posted blocks say who the policy admits, as mentions: the rule less the
    requester, the named answerers, anyone, and those an escalation step added."""
    fake, surface = slack
    await published(surface, SLACK_RUN, SLACK_PEOPLE)
    shown = [json.dumps(call.args["blocks"]) for call in fake.of("chat.postMessage")]
    pairs = zip(said("<@U0BO>", "<@U0CY>", "<@U0DAN>").values(), shown, strict=True)
    assert [sentence in blocks for sentence, blocks in pairs] == [True] * 4


# Teams ----------------------------------------------------------------------------------

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
ANA, BO, CY, DAN = (
    "0a0a0a0a-0000-4000-8000-00000000000a",
    "0b0b0b0b-0000-4000-8000-00000000000b",
    "0c0c0c0c-0000-4000-8000-00000000000c",
    "0d0d0d0d-0000-4000-8000-00000000000d",
)
TEAMS_PEOPLE = tuple(f"teams:{TENANT}:{who}" for who in (ANA, BO, CY, DAN))


def teams_run(service_url: str) -> RunRecord:
    reference = {
        "serviceUrl": service_url,
        "conversation": {"id": "a:1chat"},
        "user": {"id": "29:a", "name": "Ana", "aadObjectId": ANA},
    }
    return RunRecord(
        "r1",
        f"{TENANT}/a:1chat",
        "teams",
        TEAMS_PEOPLE[0],
        "go",
        0.0,
        conversation={"key": "a:1chat", "reference": reference},
    )


@pytest.fixture
async def teams() -> AsyncIterator[tuple[FakeConnector, TeamsSurface]]:
    fake = await FakeConnector().start()

    async def no_token() -> str | None:
        return None

    connector = Connector(token=no_token)
    yield (
        fake,
        TeamsSurface(connector, schema_of=lambda _name: None, attempts=1),
    )
    await connector.close()
    await fake.close()


async def test_teams_cards_show_who_may_answer_as_decided(
    teams: tuple[FakeConnector, TeamsSurface],
) -> None:
    """The card's footer says who the policy admits, the same sentence as Slack's: the
    deployment's rule and the question's policy are not overridden by one flag."""
    fake, surface = teams
    await published(surface, teams_run(fake.url), TEAMS_PEOPLE)
    cards = [json.dumps(call.body) for call in fake.posted()]
    # In the cards' JSON text the ellipsis a short id ends in is escaped.
    bo, cy, dan = (f"Teams user {short}\\u2026" for short in ("0b0b0b0b", "0c0c0c0c", "0d0d0d0d"))
    pairs = zip(said(bo, cy, dan).values(), cards, strict=True)
    assert [sentence in card for sentence, card in pairs] == [True] * 4


# The console ----------------------------------------------------------------------------

CONSOLE_RUN = RunRecord("r1", "console", "console", "console:ana", "deploy web", 0.0)
CONSOLE_PEOPLE = ("console:ana", "console:bo", "console:cy", "console:dan")


def test_the_console_page_shows_who_may_answer_as_decided() -> None:
    """The page's "who may answer" is the policy's sentence, each person by name."""
    viewer = Viewer(Responder("console:ana", "ana"), policy(*CONSOLE_PEOPLE[1:3]))
    shown = {
        kind: viewer.answerers(CONSOLE_RUN, record)
        for kind, record in kinds(*CONSOLE_PEOPLE).items()
    }
    assert shown == said("bo", "cy", "dan")


# The admin's pending and show -----------------------------------------------------------


async def test_admin_pending_and_show_list_who_may_answer_as_decided(
    sqlite_stores: Stores,
) -> None:
    """`pending` and `show` list whom the policy admits for each kind, then "admins"."""
    admin = AdminService(
        stores=sqlite_stores,
        admins={"console:root"},
        max_ttl_seconds=86_400.0,
        policy=policy(*CONSOLE_PEOPLE[1:3]),
    )
    for number, record in enumerate(kinds(*CONSOLE_PEOPLE).values()):
        asked = dataclasses.replace(
            record, interrupt_id=f"int_{number}", run_id=f"r{number}", scope="console"
        )
        run = dataclasses.replace(CONSOLE_RUN, run_id=asked.run_id, status=RunStatus.REMOTE)
        request = ApiRequest(
            asked.interrupt_id, "ana", f"k{number}", "hash", "approval", 0.0, key_id="key_ana"
        )
        assert await steps(sqlite_stores).lifecycle.ask_remote(run, asked, request) is not None
    root = Responder("console:root", "root", is_admin=True)
    page = await admin.handle("pending", who=root)
    assert isinstance(page, results.PendingPage)
    listed = {item.question.interrupt_id: item.may_answer for item in page.items}
    expected = {
        "int_0": ("console:bo", "console:cy", "admins"),
        "int_1": ("console:bo", "console:cy", "admins"),
        "int_2": ("anyone in console",),
        "int_3": ("console:bo", "console:dan", "admins"),
    }
    assert listed == expected
    for interrupt_id, may_answer in expected.items():
        shown = await admin.handle(f"show {interrupt_id}", who=root)
        assert isinstance(shown, results.RecordShown) and shown.may_answer == may_answer
