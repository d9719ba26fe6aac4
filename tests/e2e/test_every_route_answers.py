"""Every kind of question, on every route it can have, answered from Slack and from Teams
exactly as each platform sends it (issue 38), against one real ``python -m bot``.

One process serves Slack (the loopback Web API), Teams (the loopback Bot Framework
connector, emulator mode), the console and email (a loopback SMTP server) for the whole
module; each case asks its own question over ``/v1`` and answers it as a person would:
on Slack a click, then for a modal the ``view_submission`` of the very view the bot
opened with its ``state.values`` filled as Slack fills them; on Teams the
``Action.Execute`` invoke with the card's inputs merged into the action's data, empty
inputs left out. The agent must read back exactly what the person entered (no field the
person filled missing), and every other route's post must show the question closed.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from tests import waiting
from tests.e2e._api import Api, api_env
from tests.e2e._server import BotServer, json_lines
from tests.e2e._slack import ALICE, CHANNEL, SlackDriver, checked_slack, slack_bot, text_of
from tests.e2e._teams import ALICE as TEAMS_ALICE
from tests.e2e._teams import (
    TeamsDriver,
    actions,
    card_of,
    checked_connector,
    elements,
    message,
    submitted,
    texts,
)
from tests.fakes.bf_connector import Call as TeamsCall
from tests.fakes.slack_api import Call as SlackCall
from tests.fakes.slack_api import buttons
from tests.fakes.smtp import SmtpFake

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

OTHER_CHANNEL = "C0OTHER"
TEAMS_CHANNEL = "19:ops-channel@thread.tacv2"
TEAMS_OTHER = "19:other-channel@thread.tacv2"
ANA = "ana@example.com"
EDITED = {"service": "web", "environment": "production"}
ARGUMENTS = {"service": "web", "environment": "staging"}
_cases = itertools.count(1)


# -- the process, shared by every case -------------------------------------------------


@dataclass
class World:
    """The bot process, its fakes, and a driver for each platform."""

    bot: BotServer
    api: Api
    http: aiohttp.ClientSession
    slack: SlackDriver
    teams: TeamsDriver
    smtp: SmtpFake


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    """One bot serving Slack, Teams, the console and email, for every case of the module."""
    folder = tmp_path_factory.mktemp("every-route")
    smtp = SmtpFake().start()
    servers: list[BotServer] = []

    async def start(**env: str) -> BotServer:
        servers.append(BotServer(folder / "bot", **env))
        return await servers[-1].start()

    timeout = aiohttp.ClientTimeout(total=30)
    try:
        async with (
            checked_slack() as fake,
            checked_connector() as connector,
            aiohttp.ClientSession(timeout=timeout) as http,
        ):
            env = api_env(
                BOT_API_CREATES_PER_MINUTE="100000",
                BOT_SMTP_URL=smtp.url,
                BOT_EMAIL_FROM="bridge@bridge.example",
            )
            bot = await slack_bot(start, fake, **env)
            teams = TeamsDriver(http, bot, connector)
            for channel in (TEAMS_CHANNEL, TEAMS_OTHER):
                # Seen once, so the bot holds the conversation's reference and can post there.
                await teams.say("hello", conversation=channel, kind="channel", mention=True)
            # Both demo replies posted before any case, so no case waits behind them.
            await connector.wait_for(lambda: len(connector.texts()) >= 2, what="the replies")
            yield World(bot, Api(http, bot.url), http, SlackDriver(http, bot, fake), teams, smtp)
            bot.close()
            assert "Traceback" not in bot.log_text()
            errors = [
                r for r in json_lines(bot.log_text()) if r.get("level") in ("error", "critical")
            ]
            assert errors == [], errors
    finally:
        for server in servers:
            server.close()
            print(f"--- {server.log_path} (last lines) ---\n{server.log_tail()}")
        smtp.stop()


# -- where a question is posted ---------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """One route: a surface and its conversation."""

    surface: str
    conversation: str

    def route(self) -> dict[str, str]:
        return {"surface": self.surface, "conversation": self.conversation}


SLACK, SLACK_OTHER = Place("slack", CHANNEL), Place("slack", OTHER_CHANNEL)
TEAMS, TEAMS_SECOND = Place("teams", TEAMS_CHANNEL), Place("teams", TEAMS_OTHER)
EMAIL = Place("email", ANA)
FIRSTS = {"slack": SLACK, "teams": TEAMS, "email": EMAIL}
POSITIONS = (
    "only",
    "first of two",
    "behind slack",
    "behind teams",
    "behind console",
    "behind email",
)


def routes_for(platform: str, position: str, case: str) -> list[Place]:
    """The question's routes, the platform's own among them (first, or second)."""
    own = FIRSTS[platform]
    if position == "only":
        return [own]
    if position == "first of two":
        return [own, TEAMS if platform == "slack" else SLACK]
    first = position.removeprefix("behind ")
    if first == "console":
        return [Place("console", f"every-route-{case}"), own]
    if first == platform:
        return [own, SLACK_OTHER if platform == "slack" else TEAMS_SECOND]
    return [FIRSTS[first], own]


# -- what each kind asks, what the person enters, what the agent must read ---------------


@dataclass(frozen=True)
class Entered:
    """What one person entered, as each platform carries it, and what the agent reads.

    ``slack``: by input block id, the value of its element in ``state.values`` (an
    option's value for a choice, a list for several); ``teams``: by input id, the text
    the card submits. ``press``: the button (Slack's label, Teams' title) that sends it;
    ``opens``: whether Slack's button opens a modal first."""

    answer: dict[str, Any]
    slack: dict[str, Any]
    teams: dict[str, str]
    slack_press: str
    teams_press: str
    opens: bool = True


@dataclass(frozen=True)
class Kind:
    name: str
    kind: str
    payload: Callable[[str], dict[str, Any]]
    entered: Callable[[dict[str, Any]], Entered]


FREE = "free text"
FEW = ("staging", "production", "canary")
MULTI = ("web", "api", "worker", "cron")
MANY = tuple(f"region-{i:02d}" for i in range(12))


def _question(shape: str, i: int, marker: str) -> dict[str, Any]:
    text = f"Question {i} {marker}: {shape}?"
    match shape:
        case "free text":
            return {"question": text, "header": f"Q{i}"}
        case "one of a few":
            return {"question": text, "options": [{"label": o} for o in FEW]}
        case "several":
            return {
                "question": text,
                "options": [{"label": o} for o in MULTI],
                "multi_select": True,
            }
        case "one of many":
            options = [{"label": o} for o in MANY[:8]]
            return {"question": text, "header": "Region", "options": options}
        case "several of many":
            options = [{"label": o, "description": f"in {o}"} for o in MANY[:10]]
            return {"question": text, "options": options, "multi_select": True}
    raise AssertionError(shape)


SHAPES = ("free text", "one of a few", "several", "one of many", "several of many")


def ask(shapes: tuple[str, ...]) -> Callable[[str], dict[str, Any]]:
    return lambda marker: {
        "questions": [_question(shape, i, marker) for i, shape in enumerate(shapes)]
    }


def ask_entered(payload: dict[str, Any]) -> Entered:
    """Each question answered: a sentence typed, the second option, the first and third."""
    answers: dict[str, Any] = {}
    slack: dict[str, Any] = {}
    teams: dict[str, str] = {}
    for i, question in enumerate(payload["questions"]):
        labels = [o["label"] for o in question.get("options", [])]
        key = f"q{i}"
        if not labels:
            typed = f"Ship it after lunch, {i}\nthen tell #ops."
            answers[question["question"]], slack[key], teams[key] = typed, typed, typed
        elif question.get("multi_select"):
            answers[question["question"]] = [labels[0], labels[2]]
            slack[key], teams[key] = ["0", "2"], "0,2"
        else:
            answers[question["question"]] = labels[1]
            slack[key], teams[key] = "1", "1"
    questions = payload["questions"]
    only = questions[0] if len(questions) == 1 else {}
    buttons_only = not only.get("multi_select") and 0 < len(only.get("options", [])) <= 5
    if buttons_only:
        # One question with a few options: its options are the buttons on both platforms.
        label = only["options"][1]["label"]
        return Entered({"answers": answers}, {}, {}, label, label, opens=False)
    return Entered({"answers": answers}, slack, teams, "Answer…", "Send answer")


# Every field type a form can ask: (name, its schema, what the agent reads, what Slack's
# state holds, what the Teams card submits).
AT = "2026-12-01T16:00:00Z"
FIELDS: list[tuple[str, dict[str, Any], Any, Any, str]] = [
    ("name", {"type": "string", "title": "Name", "maxLength": 80}, "Ada", "Ada", "Ada"),
    ("notes", {"type": "string", "description": "Anything else"}, "a\nb", "a\nb", "a\nb"),
    ("email", {"type": "string", "format": "email"}, ANA, ANA, ANA),
    (
        "site",
        {"type": "string", "format": "uri"},
        "https://a.example/x",
        "https://a.example/x",
        "https://a.example/x",
    ),
    ("start", {"type": "string", "format": "date"}, "2026-12-01", "2026-12-01", "2026-12-01"),
    (
        "at",
        {"type": "string", "format": "date-time"},
        AT,
        int(datetime.fromisoformat(AT).replace(tzinfo=UTC).timestamp()),
        AT,
    ),
    ("count", {"type": "integer", "minimum": 0, "maximum": 100}, 7, "7", "7"),
    ("ratio", {"type": "number"}, 2.5, "2.5", "2.5"),
    ("agree", {"type": "boolean", "title": "Agree"}, True, "true", "true"),
    ("plan", {"type": "string", "enum": ["free", "pro", "team"]}, "pro", "1", "1"),
    (
        "size",
        {"type": "string", "enum": ["s", "m", "l"], "enumNames": ["S", "M", "L"]},
        "l",
        "2",
        "2",
    ),
    (
        "tier",
        {
            "type": "string",
            "oneOf": [{"const": "gold", "title": "Gold"}, {"const": "silver", "title": "Silver"}],
        },
        "silver",
        "1",
        "1",
    ),
    ("region", {"type": "string", "enum": list(MANY)}, MANY[9], "9", "9"),
    (
        "tags",
        {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        ["a", "c"],
        ["0", "2"],
        "0,2",
    ),
    (
        "zones",
        {"type": "array", "items": {"type": "string", "enum": list(MANY)}},
        [MANY[1], MANY[11]],
        ["1", "11"],
        "1,11",
    ),
]
# Left empty in the form whose fields are all optional.
LEFT_EMPTY = {"notes", "site", "ratio"}


def form(required: bool) -> Callable[[str], dict[str, Any]]:
    def payload(marker: str) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {name: spec for name, spec, *_ in FIELDS},
        }
        if required:
            schema["required"] = [name for name, *_ in FIELDS]
        return {"title": f"Sign up {marker}", "message": f"Who are you? {marker}", "schema": schema}

    return payload


def form_entered(required: bool) -> Callable[[dict[str, Any]], Entered]:
    def entered(payload: dict[str, Any]) -> Entered:
        del payload
        filled = [f for f in FIELDS if required or f[0] not in LEFT_EMPTY]
        answer = {name: value for name, _, value, _, _ in filled}
        slack = {f"f:{name}": value for name, _, _, value, _ in filled}
        teams = {f"f_{name}": value for name, *_, value in filled}
        return Entered(answer, slack, teams, "Answer…", "Send")

    return entered


def approval(marker: str) -> dict[str, Any]:
    return {
        "action": "deploy",
        "summary": f"Deploy web 1.5 to prod {marker}",
        "arguments": ARGUMENTS,
        "risk": "high",
    }


def decided(decision: str) -> Callable[[dict[str, Any]], Entered]:
    comment, reply = "Not during the freeze.", "Wait until Monday, then ask again."
    answers = {
        "approve": Entered(
            {"decision": "approve", "comment": ""}, {}, {}, "Approve", "Approve", opens=False
        ),
        "reject": Entered(
            {"decision": "reject", "comment": comment},
            {"comment": comment},
            {"comment": comment},
            "Reject…",
            "Reject",
        ),
        "edit": Entered(
            {
                "decision": "edit",
                "comment": "",
                "arguments": EDITED,
                "original_arguments": ARGUMENTS,
            },
            {"e:environment": "production"},
            {"a1": "production"},
            "Edit…",
            "Approve with changes",
        ),
        "respond": Entered(
            {"decision": "respond", "comment": "", "message": reply},
            {"message": reply},
            {"message": reply},
            "Respond…",
            "Respond",
        ),
    }
    return lambda payload: answers[decision]


KINDS = [
    Kind("ask one choice", "ask_user", ask(("one of a few",)), ask_entered),
    Kind("ask free text", "ask_user", ask(("free text",)), ask_entered),
    Kind("ask multi-select", "ask_user", ask(("several",)), ask_entered),
    Kind("ask more than five options", "ask_user", ask(("one of many",)), ask_entered),
    *[Kind(f"ask {n} questions", "ask_user", ask(SHAPES[:n]), ask_entered) for n in range(2, 6)],
    Kind("approval approve", "approval", approval, decided("approve")),
    Kind("approval reject", "approval", approval, decided("reject")),
    Kind("approval edit", "approval", approval, decided("edit")),
    Kind("approval respond", "approval", approval, decided("respond")),
    Kind("form all optional", "form", form(required=False), form_entered(required=False)),
    Kind("form all required", "form", form(required=True), form_entered(required=True)),
]


# -- a post on each surface, and its close -----------------------------------------------


async def slack_post(world: World, place: Place, marker: str) -> SlackCall:
    def ours(call: SlackCall) -> bool:
        return (
            call.args.get("channel") == place.conversation
            and marker in text_of(call)
            and bool(call.response.get("ok"))
        )

    return (await world.slack.fake.wait_for("chat.postMessage", where=ours))[0]


async def teams_card(world: World, place: Place, marker: str) -> TeamsCall:
    connector = world.teams.connector

    def ours() -> list[TeamsCall]:
        return [
            c
            for c in connector.cards()
            if c.conversation.split(";")[0] == place.conversation
            and marker in json.dumps(card_of(c.body))
        ]

    found: list[TeamsCall] = await connector.wait_for(ours, what=f"the card of {marker}")
    return found[0]


def _plain_text(mail: EmailMessage) -> str:
    body = mail.get_body(preferencelist=("plain",))
    assert body is not None
    return str(body.get_content())


async def mailed(world: World, marker: str) -> str:
    """The first answer link of the email that asks ``marker``'s question."""

    def ours() -> list[str]:
        return [_plain_text(m) for m in world.smtp.taken() if marker in _plain_text(m)]

    (text, *_) = await waiting.eventually(ours, what=f"the email of {marker}")
    link = re.search(r"http://\S+/q/\S+", text)
    assert link is not None, text
    return link.group(0)


@dataclass
class Posted:
    """A case's question and where it stands posted."""

    id: str
    places: list[Place]
    slack: dict[Place, SlackCall]
    teams: dict[Place, TeamsCall]
    links: dict[Place, str]


async def asked(world: World, kind: Kind, places: list[Place], marker: str) -> Posted:
    body: dict[str, Any] = {
        "idempotency_key": marker,
        "kind": kind.kind,
        "payload": kind.payload(marker),
        "answerers": ["anyone"],
    }
    if kind.kind == "approval":
        body["allow"] = ["approve", "reject", "edit", "respond"]
    if len(places) == 1:
        body["route"] = places[0].route()  # the usual route: a conversation, no thread
    else:
        body["routes"] = [p.route() for p in places]
    created = await world.api.created(body)
    posted = Posted(created["id"], places, {}, {}, {})
    for place in places:
        if place.surface == "slack":
            posted.slack[place] = await slack_post(world, place, marker)
        elif place.surface == "teams":
            posted.teams[place] = await teams_card(world, place, marker)
        elif place.surface == "email":
            posted.links[place] = await mailed(world, marker)
    return posted


async def closed_everywhere(world: World, posted: Posted, by: str) -> None:
    """Every post of the question shows it closed: each Slack message and Teams card edited
    without its buttons, the console and the email's page saying who answered."""
    for call in posted.slack.values():
        (edit, *_) = await world.slack.edits_of(call)
        assert not buttons(edit.args), text_of(edit)
    connector = world.teams.connector
    for card in posted.teams.values():
        updates = await connector.wait_for(
            lambda card=card: connector.updates(card.activity_id), what="the card's edit"
        )
        assert "actions" not in card_of(updates[-1].body), card_of(updates[-1].body)
    for place in posted.places:
        if place.surface == "console":
            url = f"{world.bot.url}/api/conversations/{place.conversation}"
            async with world.http.get(url) as response:
                shown = await response.json()
            (question,) = [q for run in shown["runs"] for q in run["questions"]]
            assert question["status"] == "answered" and question["token"] is None
            assert by in question["closed_text"], question["closed_text"]
    for link in posted.links.values():
        async with world.http.get(link) as page:
            html = await page.text()
        assert 'name="csrf"' not in html and by in html, html


# -- answering, as each platform sends it -------------------------------------------------

# The inputs a card can hold.
_INPUTS = ("Input.Text", "Input.ChoiceSet", "Input.Number", "Input.Toggle", "Input.Date")


def slack_state(view: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
    """``view.state.values`` as Slack fills it: every input block, keyed by block and action
    id, holding its element's value (what was entered, else what the view drew in it)."""
    values: dict[str, Any] = {}
    for block in view["blocks"]:
        if block["type"] != "input":
            continue
        element = block["element"]
        kind = element["type"]
        entry = entries.get(block["block_id"])
        state: dict[str, Any] = {"type": kind}
        if kind in ("radio_buttons", "static_select"):
            options = {o["value"]: o for o in element["options"]}
            state["selected_option"] = (
                options[entry] if entry is not None else element.get("initial_option")
            )
        elif kind in ("checkboxes", "multi_static_select"):
            options = {o["value"]: o for o in element["options"]}
            picked = [options[v] for v in entry] if entry is not None else None
            state["selected_options"] = picked or element.get("initial_options", [])
        elif kind == "datepicker":
            state["selected_date"] = entry or element.get("initial_date")
        elif kind == "datetimepicker":
            state["selected_date_time"] = entry or element.get("initial_date_time")
        else:
            state["value"] = entry if entry is not None else element.get("initial_value")
        values[block["block_id"]] = {element["action_id"]: state}
    return values


async def answer_in_slack(world: World, posted: Posted, place: Place, entered: Entered) -> None:
    slack = world.slack
    call = posted.slack[place]
    if not entered.opens:
        status, _ = await slack.click(call, entered.slack_press, channel=place.conversation)
        assert status == 200
        return
    view = await slack.opened(call, entered.slack_press, channel=place.conversation)
    shown = {b["block_id"] for b in view["blocks"] if b["type"] == "input"}
    assert set(entered.slack) <= shown, f"the modal has no input for {set(entered.slack) - shown}"
    status, body = await slack.submit(view, slack_state(view, entered.slack))
    assert (status, body) == (200, ""), body


async def answer_in_teams(world: World, posted: Posted, place: Place, entered: Entered) -> None:
    card = posted.teams[place]
    drawn = {str(e["id"]) for kind in _INPUTS for e in elements(card_of(card.body), kind)}
    assert set(entered.teams) <= drawn, f"the card has no input for {set(entered.teams) - drawn}"
    assert entered.teams_press in [a["title"] for a in actions(card_of(card.body))]
    reply = await world.teams.click(
        card,
        entered.teams_press,
        entered.teams,
        who=TEAMS_ALICE,
        conversation=place.conversation,
        kind="channel",
    )
    # The card in its place is the closed one, saying who answered (never a refusal).
    assert "actions" not in reply and any(TEAMS_ALICE["name"] in t for t in texts(reply)), reply


ANSWERERS = {"slack": ALICE.lower(), "teams": TEAMS_ALICE["name"]}


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
@pytest.mark.parametrize("platform", ["slack", "teams"])
async def test_the_agent_reads_exactly_what_the_person_entered(
    world: World, platform: str, kind: Kind, position: str
) -> None:
    """Answered on the platform, wherever its route stands: the agent reads every field the
    person filled, as entered, and every post of the question shows it closed."""
    # Letters and digits only: no surface escapes it, and no marker holds another.
    marker = f"case{next(_cases):03d}z"
    places = routes_for(platform, position, marker)
    own = places[0] if position in ("only", "first of two") else places[1]
    posted = await asked(world, kind, places, marker)
    entered = kind.entered(kind.payload(marker))

    if platform == "slack":
        await answer_in_slack(world, posted, own, entered)
    else:
        await answer_in_teams(world, posted, own, entered)

    status, shown = await world.api.get(posted.id, wait=15)
    assert status == 200 and shown["status"] == "answered", shown
    answer = shown["answer"]
    filled = set(entered.answer.get("answers", entered.answer))
    missing = filled - set(answer.get("answers", answer))
    assert not missing, f"filled in but not received: {missing}"
    assert answer == entered.answer
    await closed_everywhere(world, posted, ANSWERERS[platform])


async def test_a_teams_client_without_universal_actions_answers_a_further_route(
    world: World,
) -> None:
    """Action.Submit (a message carrying the card's data and inputs) on a card behind Slack:
    the agent reads every field as entered and both posts show the question closed."""
    kind = next(k for k in KINDS if k.name == "form all optional")
    marker = f"case{next(_cases):03d}z"
    posted = await asked(world, kind, [SLACK, TEAMS], marker)
    entered = kind.entered(kind.payload(marker))
    card = posted.teams[TEAMS]
    data = submitted(card_of(card.body), entered.teams_press, entered.teams)
    sent = message(world.teams.connector.url, "", conversation=TEAMS_CHANNEL, kind="channel")
    status, _ = await world.teams.post({**sent, "value": data, "replyToId": card.activity_id})
    assert status in (200, 201)

    status, shown = await world.api.get(posted.id, wait=15)
    assert status == 200 and shown["answer"] == entered.answer, shown
    await closed_everywhere(world, posted, ANSWERERS["teams"])
