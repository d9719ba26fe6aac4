"""Approve with changes against a real bot process, on SQLite and PostgreSQL: what an edit
keeps, how a quorum counts a changed proposal, and numbers or nesting no answer may carry.

Questions are asked over ``/v1`` and answered on the console by signed-in people (ana, bo
and carl), so a quorum has three distinct answerers. Every refusal is a 4xx naming the
field, with nothing recorded, and the server's log holds no traceback and no ERROR line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.e2e._api import Api, api_env
from tests.e2e._client import ConsoleClient
from tests.e2e._server import BotServer, StartBot, json_lines
from tests.stores._postgres import fresh_schema

pytestmark = pytest.mark.e2e

PASSWORDS = {"ana": "ana-" + "a1" * 8, "bo": "bo-" + "b2" * 8, "carl": "carl-" + "c3" * 8}
KEYS = "k1:" + "x" * 48
ROUTE = {"surface": "console", "conversation": "edits"}
ASKED = {"service": "web", "env": "prod", "command": "deploy --all", "dry_run": True}
LISTED = {
    "type": "object",
    "properties": {"service": {"type": "string"}, "env": {"type": "string"}},
    "required": ["service", "env"],
}
HUGE = int("9" * 400)
DEEP = "[" * 20_000 + "]" * 20_000


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, str]]:
    """The bot's store: its own SQLite file, or a PostgreSQL schema of this test's own."""
    if request.param == "postgres":
        async with fresh_schema() as url:
            yield {"DATABASE_URL": url, "BOT_SIGNING_KEYS": KEYS}
        return
    yield {}


class Person:
    """One signed-in console user: finds the open approval and answers it as themselves."""

    def __init__(self, http: aiohttp.ClientSession, url: str, name: str) -> None:
        self.name = name
        self.console = ConsoleClient(http, url)
        self.auth = {"Authorization": aiohttp.encode_basic_auth(name, PASSWORDS[name])}

    async def questions(self) -> list[dict[str, Any]]:
        """Every question of the conversation, as the console's feed shows this person."""
        url = f"{self.console.url}/api/conversations/edits"
        async with self.console.session.get(url, headers=self.auth) as got:
            assert got.status == 200, await got.text()
            runs = (await got.json())["runs"]
        return [question for run in runs for question in run.get("questions", [])]

    async def answer(self, answer: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tokens = [
            q["token"]
            for q in await self.questions()
            if q["status"] == "outstanding" and q.get("token")
        ]
        assert len(tokens) == 1, tokens
        body = {"token": tokens[0], "answer": answer}
        url = f"{self.console.url}/api/answer"
        async with self.console.session.post(url, json=body, headers=self.auth) as response:
            return response.status, await response.json()


async def bridge(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> tuple[BotServer, Api, dict[str, Person]]:
    users = ",".join(f"{name}:{password}" for name, password in PASSWORDS.items())
    server = await start_bot(**api_env("console:*"), **store, BOT_CONSOLE_USERS=users)
    people = {name: Person(http, server.url, name) for name in PASSWORDS}
    return server, Api(http, server.url), people


def approval(key: str, arguments: dict[str, Any], **more: Any) -> dict[str, Any]:
    payload = {"action": "deploy", "summary": "Deploy web", "arguments": arguments}
    payload.update(more.pop("payload", {}))
    return {
        "idempotency_key": key,
        "kind": "approval",
        "payload": payload,
        "route": ROUTE,
        "answerers": [f"console:{name}" for name in PASSWORDS],
        "allow": ["approve", "reject", "edit"],
        **more,
    }


def quiet(server: BotServer) -> None:
    """The log holds no traceback and no ERROR line."""
    text = server.log_text()
    assert "Traceback" not in text
    errors = [r for r in json_lines(text) if str(r.get("level", "")).lower() == "error"]
    assert errors == []


async def still_open(api: Api, question_id: str) -> dict[str, Any]:
    status, question = await api.get(question_id)
    assert status == 200 and question["status"] == "open", question
    return question


# -- unlisted arguments ----------------------------------------------------------


async def test_an_edit_keeps_the_arguments_its_schema_does_not_list(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """Only env is changed: command and dry_run reach the agent as asked, sent back or not;
    changing an argument the schema does not list is refused with its name."""
    server, api, people = await bridge(start_bot, http, store)
    body = approval("unlisted", ASKED, payload={"arguments_schema": LISTED})
    created = await api.created(body)
    ana = people["ana"]
    # The console's edit panel has inputs for the listed arguments and names the rest.
    (shown,) = [q for q in await ana.questions() if q["status"] == "outstanding"]
    assert [field["key"] for field in shown["payload"]["edit_fields"]] == ["service", "env"]
    assert shown["payload"]["edit_kept"] == ["command", "dry_run"]
    # As Slack and Teams send it: every argument, the unlisted ones as asked.
    changed = {**ASKED, "command": "rm -rf /"}
    status, refused = await ana.answer({"decision": "edit", "arguments": changed})
    assert status == 422, refused
    assert "arguments.command" in refused["fields"], refused
    await still_open(api, created["id"])
    kept = {**ASKED, "env": "staging"}
    status, sent = await ana.answer({"decision": "edit", "arguments": kept})
    assert status == 200 and sent["ok"], sent
    status, closed = await api.get(created["id"], wait=10)
    assert closed["status"] == "answered", closed
    assert closed["answer"]["arguments"] == kept
    assert list(closed["answer"]["arguments"]) == list(ASKED)
    # As the console sends it: the listed arguments only.
    second = await api.created(approval("unlisted-2", ASKED, payload={"arguments_schema": LISTED}))
    listed_only = {"service": "web", "env": "staging"}
    status, sent = await people["bo"].answer({"decision": "edit", "arguments": listed_only})
    assert status == 200 and sent["ok"], sent
    status, closed = await api.get(second["id"], wait=10)
    assert closed["answer"]["arguments"] == kept
    quiet(server)


# -- a quorum and a changed proposal ----------------------------------------------


async def test_an_approver_whose_approval_an_edit_set_aside_may_approve_the_edit(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """Quorum 2 of three, reject by quorum: Bo's trailing-space edit sets Ana's approval
    aside; she approves Bo's arguments and the question closes with them, both named."""
    server, api, people = await bridge(start_bot, http, store)
    body = approval("quorum", ASKED, policy={"quorum": 2, "reject": "quorum"})
    created = await api.created(body)
    status, sent = await people["ana"].answer({"decision": "approve"})
    assert status == 200 and "1 of 2" in sent["message"], sent
    trivial = {**ASKED, "env": "prod "}
    status, sent = await people["bo"].answer({"decision": "edit", "arguments": trivial})
    assert status == 200 and "new proposal" in sent["message"], sent
    assert "may answer again" in sent["message"], sent
    question = await still_open(api, created["id"])
    assert question["tally"]["approve"] == ["console:bo"]
    status, sent = await people["ana"].answer({"decision": "edit", "arguments": trivial})
    assert status == 200 and sent["ok"], sent
    status, closed = await api.get(created["id"], wait=10)
    assert closed["status"] == "answered", closed
    answer = closed["answer"]
    assert answer["decision"] == "edit" and answer["arguments"] == trivial
    assert answer["approved_by"] == ["console:bo", "console:ana"]
    # The closing line names the proposal: the change, with its trailing space visible.
    closed_texts = [q.get("closed_text", "") for q in await people["carl"].questions()]
    assert any('env "prod" → "prod "' in text for text in closed_texts), closed_texts
    quiet(server)


async def test_a_counted_approval_still_votes_once(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """An approval that still counts for the proposal may not be cast again: 409."""
    server, api, people = await bridge(start_bot, http, store)
    created = await api.created(approval("once", ASKED, policy={"quorum": 2}))
    assert (await people["ana"].answer({"decision": "approve"}))[0] == 200
    status, again = await people["ana"].answer({"decision": "approve"})
    assert status == 409, again
    question = await still_open(api, created["id"])
    assert question["tally"]["approve"] == ["console:ana"]
    quiet(server)


async def test_proposals_are_compared_as_json_so_true_is_not_one(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """Ana approves options {"dry_run": true}, Bo {"dry_run": 1}: two proposals, not a quorum
    for the 1 Ana never approved."""
    server, api, people = await bridge(start_bot, http, store)
    asked = {"service": "web", "options": {"dry_run": False}}
    created = await api.created(approval("json", asked, policy={"quorum": 2}))
    as_true = {"service": "web", "options": '{"dry_run": true}'}
    as_one = {"service": "web", "options": '{"dry_run": 1}'}
    assert (await people["ana"].answer({"decision": "edit", "arguments": as_true}))[0] == 200
    status, sent = await people["bo"].answer({"decision": "edit", "arguments": as_one})
    assert status == 200 and "new proposal" in sent["message"], sent
    question = await still_open(api, created["id"])
    assert question["tally"]["approve"] == ["console:bo"]
    quiet(server)


# -- numbers and nesting -----------------------------------------------------------


async def test_numbers_no_json_keeps_and_deep_text_are_refused_naming_the_field(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """A 400-digit integer, 1e999, NaN, Infinity in JSON text and 20,000 nested brackets, in
    an edit: each a 422 naming the field, the question still open, nothing logged as an error."""
    server, api, people = await bridge(start_bot, http, store)
    asked = {"replicas": 2, "options": {"limit": 1}}
    created = await api.created(approval("numbers", asked))
    ana = people["ana"]
    edits: list[tuple[dict[str, Any], str]] = [
        ({"replicas": HUGE, "options": {"limit": 1}}, "arguments.replicas"),
        ({"replicas": str(HUGE), "options": {"limit": 1}}, "arguments.replicas"),
        ({"replicas": 2, "options": {"limit": HUGE}}, "arguments.options"),
        ({"replicas": 2, "options": '{"limit": 1e999}'}, "arguments.options"),
        ({"replicas": 2, "options": '{"limit": 1, "a": NaN}'}, "arguments.options"),
        ({"replicas": 2, "options": '{"limit": Infinity}'}, "arguments.options"),
        ({"replicas": 2, "options": '{"a": ' + DEEP + "}"}, "arguments.options"),
    ]
    for arguments, field in edits:
        status, refused = await ana.answer({"decision": "edit", "arguments": arguments})
        assert status == 422, (arguments, refused)
        assert field in refused["fields"], refused
    # NaN and 1e999 as JSON numbers of the request itself.
    raw = (
        '{"decision": "edit", "arguments": {"replicas": 2, "options": {"limit": 1e999, "a": NaN}}}'
    )
    status, refused = await ana.answer(json.loads(raw))
    assert status == 422 and "arguments.options" in refused["fields"], refused
    question = await still_open(api, created["id"])
    assert question["answer"] is None
    quiet(server)


async def test_a_form_answer_past_a_double_is_refused_naming_the_field(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """A 400-digit integer for a form's integer field: 422 naming it, the form still open."""
    server, api, people = await bridge(start_bot, http, store)
    schema = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
    body = {
        "idempotency_key": "form",
        "kind": "form",
        "payload": {"title": "Scale", "message": "How many?", "schema": schema},
        "route": ROUTE,
        "answerers": ["console:ana"],
    }
    created = await api.created(body)
    for given in (HUGE, str(HUGE), -HUGE):
        status, refused = await people["ana"].answer({"replicas": given})
        assert status == 422 and "replicas" in refused["fields"], refused
    await still_open(api, created["id"])
    quiet(server)


async def test_v1_refuses_numbers_json_cannot_carry_in_its_envelope(
    start_bot: StartBot, http: aiohttp.ClientSession, store: dict[str, str]
) -> None:
    """A schema's 400-digit minimum and a NaN argument on create: 400 in /v1's envelope,
    naming the field; nothing is created."""
    server, api, _ = await bridge(start_bot, http, store)
    schema = {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": HUGE}}}
    body = approval("min", {"replicas": 2}, payload={"arguments_schema": schema})
    status, refused = await api.ask(body)
    assert status == 400, refused
    assert refused["error"]["code"] == "invalid_request", refused
    assert "replicas" in refused["error"]["message"], refused
    for raw in ("NaN", "Infinity", "-Infinity", "1e999"):
        text = json.dumps(approval(f"nan-{raw}", {"replicas": 2})).replace(
            '"replicas": 2', f'"replicas": {raw}'
        )
        status, refused = await api.call("POST", "/v1/questions", text.encode())
        assert status == 400, (raw, refused)
        assert "replicas" in refused["error"]["message"], refused
    status, listed = await api.call("GET", "/v1/questions")
    assert status == 200 and listed["data"] == [], listed
    quiet(server)
