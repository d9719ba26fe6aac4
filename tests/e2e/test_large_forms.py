"""The largest form ``/v1`` accepts, answered from Slack, Teams and its link page in a real
process.

Slack sends a modal's submission with the whole view in it, form-encoded:
the largest form's view, filled to the brim, comes back far past the app's
64 KiB body limit, and the Slack door reads it (``adapters/slack/_submissions``).
Teams sends only the card's inputs, and its card keeps to Teams' size by
leaving fields out (optional ones, sent empty). The link page draws every
field and reads its form within 64 KiB and 1,000 fields. Each way the agent
reads over ``/v1`` exactly what the person entered (docs/api.md, "How large a
form each surface carries").
"""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from adapters.slack._submissions import INTERACTION_BYTES
from bot.service.delivering.messages import BODY_TOO_LARGE
from tests.e2e._api import Api, api_env
from tests.e2e._server import StartBot
from tests.e2e._slack import CHANNEL, SlackDriver, slack_bot
from tests.e2e._teams import TeamsDriver, card_of, elements, execute, message, submitted
from tests.fakes.bf_connector import FakeConnector
from tests.fakes.slack_api import FakeSlack, form_body, sign, view_submission
from tests.form_support import API_BODY_BYTES, MAX_ANSWER, largest_api_form

pytestmark = pytest.mark.e2e

TEAMS_CHANNEL = "19:forms-channel@thread.tacv2"
# An agent's question may open a thread of its own; posted into one, its Slack message is
# found by the thread it is in.
THREAD = "1699999999.000100"
# What a person types into a long text field: quotes, slashes and letters Slack escapes.
TYPED = ('Zürich “quoted” "and" a/b 中文 — ü ' * 100)[:MAX_ANSWER]
ON = datetime(2026, 12, 1, 16, 0, tzinfo=UTC)


class Surfaces:
    """One bot process serving Slack and Teams, with its agents API."""

    def __init__(
        self, http: aiohttp.ClientSession, api: Api, slack: SlackDriver, teams: TeamsDriver
    ) -> None:
        self.http = http
        self.api = api
        self.slack = slack
        self.teams = teams

    async def ask(self, key: str, route: dict[str, str]) -> dict[str, Any]:
        body = {"idempotency_key": key, "kind": "form", "payload": PAYLOAD, "route": route}
        assert len(json.dumps(body)) <= API_BODY_BYTES
        return await self.api.created(body)

    async def answer_of(self, question_id: str) -> dict[str, Any]:
        status, shown = await self.api.get(question_id, wait=20)
        assert status == 200 and shown["status"] == "answered", shown
        return dict(shown["answer"])


PAYLOAD = largest_api_form()


@pytest.fixture
async def surfaces(
    start_bot: StartBot, fake: FakeSlack, connector: FakeConnector, http: aiohttp.ClientSession
) -> Surfaces:
    bot = await slack_bot(start_bot, fake, **api_env())
    teams = TeamsDriver(http, bot, connector)
    # Someone writes in the Teams channel once: the bot keeps its conversation reference.
    hello = message(
        connector.url, "hello", conversation=TEAMS_CHANNEL, kind="channel", mention=True
    )
    status, _ = await teams.post(hello)
    assert status == 201
    return Surfaces(http, Api(http, bot.url), SlackDriver(http, bot, fake), teams)


async def test_the_largest_form_filled_in_from_slack_reaches_the_agent_as_typed(
    surfaces: Surfaces,
) -> None:
    """Every field filled to its limit: the submission passes 64 KiB and is answered whole."""
    slack = surfaces.slack
    created = await surfaces.ask(
        "largest-on-slack", {"surface": "slack", "conversation": CHANNEL, "thread": THREAD}
    )
    posted = await slack.question()
    assert posted.args["thread_ts"] == THREAD
    status, _ = await slack.click(posted, "Answer…")
    assert status == 200
    view = (await slack.fake.wait_for("views.open"))[0].args["view"]
    values, expected = _filled_in_slack(view)
    submission = view_submission(view, values, user="U0ALICE")
    assert API_BODY_BYTES < len(form_body(submission).encode()) <= INTERACTION_BYTES
    status, text = await slack.interact(submission)
    assert (status, text) == (200, "")
    answer = await surfaces.answer_of(created["id"])
    assert answer == expected
    assert len(answer) == len(PAYLOAD["schema"]["properties"])


async def test_the_largest_form_answered_from_teams_reaches_the_agent_as_entered(
    surfaces: Surfaces,
) -> None:
    """The card holds what fits (required fields first); what was entered arrives, no more."""
    created = await surfaces.ask(
        "largest-on-teams", {"surface": "teams", "conversation": TEAMS_CHANNEL}
    )
    connector = surfaces.teams.connector
    posted = (
        await connector.wait_for(
            lambda: [c for c in connector.cards() if "The largest form" in json.dumps(c.body)],
            what="the form's card",
        )
    )[0]
    card = card_of(posted.body)
    typed, expected = _filled_in_teams(card)
    assert set(PAYLOAD["schema"]["required"]) <= set(expected)
    data = submitted(card, "Send", typed)
    status, reply = await surfaces.teams.post(
        execute(
            connector.url,
            data,
            conversation=TEAMS_CHANNEL,
            kind="channel",
            reply_to=posted.activity_id,
        )
    )
    assert status == 200, reply
    assert await surfaces.answer_of(created["id"]) == expected


async def test_only_a_request_shaped_as_slacks_interactions_is_read_past_the_body_limit(
    surfaces: Surfaces,
) -> None:
    """Larger than 64 KiB: a forged interaction is read, then refused 401; past the
    interaction limit, or without Slack's headers, or as an event, 413; no trace, still up."""
    slack = surfaces.slack
    url = f"{slack.bot.url}/slack/events"
    large = form_body({"type": "view_submission", "padding": "x" * (2 * API_BODY_BYTES)})
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    forged = {**form, **sign(large, secret="not-the-signing-secret")}
    too_large = "payload=" + "x" * INTERACTION_BYTES
    cases = [
        (large, forged, 401),
        (too_large, {**form, **sign(too_large)}, 413),
        (large, form, 413),
        (large, {**sign(large), "Content-Type": "application/json"}, 413),
    ]
    for body, headers, expected in cases:
        sent = io.BytesIO(body.encode())  # aiohttp warns of a large body sent as bytes
        async with surfaces.http.post(url, data=sent, headers=headers) as response:
            text = await response.text()
            assert response.status == expected, (headers, text)
            if expected == 413:
                assert json.loads(text)["error"] == BODY_TOO_LARGE
    async with surfaces.http.get(f"{slack.bot.url}/healthz") as response:
        assert response.status == 200
    assert "Traceback" not in slack.bot.log_text()


async def test_the_largest_form_answered_on_its_link_page_reaches_the_agent_as_entered(
    surfaces: Surfaces,
) -> None:
    """Every field drawn; the page's form comes back within its 1,000 fields as entered, and
    one past them (every box ticked) is a 413 that stores nothing."""
    body = {
        "idempotency_key": "largest-on-a-link",
        "kind": "form",
        "payload": PAYLOAD,
        "route": {"surface": "link", "conversation": "forms"},
        "answerers": ["link:ops"],
    }
    created = await surfaces.api.created(body)
    link = created["links"]["ops"]
    async with surfaces.http.get(link) as page:
        assert page.status == 200
        html = await page.text()
    csrf = re.search(r'name="csrf" value="([^"]+)"', html)
    assert csrf is not None
    every, expected = _filled_in_page(html)
    too_many = [("csrf", csrf.group(1)), *every]
    assert len(too_many) > 1000
    async with surfaces.http.post(link, data=too_many, allow_redirects=False) as sent:
        assert sent.status == 413
    status, shown = await surfaces.api.get(created["id"])
    assert status == 200 and shown["status"] == "open"
    # Nine of the ten multi-selects with every box ticked, the tenth left empty: within.
    last_many = next(f"f{i}" for i, n in enumerate(_names()) if n == "many_9")
    fields = [("csrf", csrf.group(1)), *[(k, v) for k, v in every if k != last_many]]
    del expected["many_9"]
    async with surfaces.http.post(link, data=fields, allow_redirects=False) as sent:
        assert sent.status == 303, await sent.text()
    assert await surfaces.answer_of(created["id"]) == expected


# -- what a person enters ---------------------------------------------------------------


def _spec(name: str) -> dict[str, Any]:
    return dict(PAYLOAD["schema"]["properties"][name])


def _entered(name: str) -> Any:
    """What the person enters in ``name``'s field, as the agent should read it."""
    spec = _spec(name)
    if spec["type"] == "array":
        return list(spec["items"]["enum"])  # every choice
    if "enum" in spec:
        return spec["enum"][-1]
    if spec["type"] == "integer":
        return 999_999_999
    if spec["type"] == "boolean":
        return True
    return {
        "email": "ada.lovelace@example.com",
        "uri": "https://example.com/a/b?c=d&e=f",
        "date": "2026-12-01",
        "date-time": "2026-12-01T16:00:00Z",
    }.get(spec.get("format", ""), TYPED)


def _filled_in_slack(view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``state.values`` of the modal with every field filled, and the answer they make."""
    values: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for block in view["blocks"]:
        if block["type"] != "input":
            continue
        name = block["block_id"].removeprefix("f:")
        element = block["element"]
        kind = element["type"]
        entered = expected[name] = _entered(name)
        state: dict[str, Any] = {"type": kind}
        if kind == "multi_static_select":
            state["selected_options"] = element["options"]
        elif kind in ("static_select", "radio_buttons"):
            picked = element["options"][-1] if "enum" in _spec(name) else element["options"][0]
            state["selected_option"] = picked
        elif kind == "datepicker":
            state["selected_date"] = entered
        elif kind == "datetimepicker":
            state["selected_date_time"] = int(ON.timestamp())
        else:
            state["value"] = str(entered)
        values[block["block_id"]] = {element["action_id"]: state}
    return values, expected


def _names() -> list[str]:
    return list(PAYLOAD["schema"]["properties"])


def _filled_in_page(html: str) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The answer page's form with every field filled (``f<index>``, choices by position), as
    a browser posts it, and the answer it makes; the page must draw each field."""
    fields: list[tuple[str, str]] = []
    expected: dict[str, Any] = {}
    for index, name in enumerate(_names()):
        field, spec = f"f{index}", _spec(name)
        assert f'name="{field}"' in html, name
        entered = expected[name] = _entered(name)
        if spec["type"] == "array":
            fields += [(field, str(i)) for i in range(len(entered))]
        elif "enum" in spec:
            fields.append((field, str(len(spec["enum"]) - 1)))
        elif spec["type"] == "boolean":
            fields.append((field, "true"))
        elif spec.get("format") == "date-time":
            fields.append((field, "2026-12-01T16:00"))  # a datetime-local input, read as UTC
        else:
            # Twenty long answers would pass the page's 64 KiB once URL-encoded: shorter here.
            text = TYPED[:100] if entered == TYPED else str(entered)
            expected[name] = text if entered == TYPED else entered
            fields.append((field, text))
    return fields, expected


def _filled_in_teams(card: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """The card's inputs filled in, by id, and the answer they make."""
    typed: dict[str, str] = {}
    expected: dict[str, Any] = {}
    for kind in ("Input.Text", "Input.ChoiceSet", "Input.Number", "Input.Toggle", "Input.Date"):
        for element in elements(card, kind):
            name = str(element["id"]).removeprefix("f_")
            entered = expected[name] = _entered(name)
            if kind == "Input.ChoiceSet":
                count = len(element["choices"])
                many = element.get("isMultiSelect")
                typed[element["id"]] = ",".join(map(str, range(count))) if many else str(count - 1)
            elif kind == "Input.Toggle":
                typed[element["id"]] = "true"
            else:
                typed[element["id"]] = str(entered)
    return typed, expected
