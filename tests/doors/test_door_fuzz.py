"""Standing fuzzers, one per door: no 5xx, no traceback, and a refused request changes nothing.

Each door is the real app in process; Slack requests are signed (most of
them: the rest carry bent signature headers), Teams runs in emulator mode.
Inputs start from what the platform really sends and are bent (``bent``).
A 4xx may leave only the record of a refusal (its audit line and count,
a cross-scope attempt): those are what an admin reads to see refusals.
The example budget is fixed and small; ``fuzz <door>: N examples`` is
printed at the end of the session.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.slack._modals import Metadata
from bot.contract.json_values import first_unkept_number
from tests.doors._doors import BACKENDS, Door, Logs, door_on
from tests.doors._slack_door import FORM, JSON, SlackDoor, command_form, signed, slack_door
from tests.doors._strategies import bent, form_fields, numbered, spiked
from tests.doors.test_teams_door import TeamsDoor, teams_door
from tests.e2e._teams import actions, card_of, execute, message
from tests.fakes.slack_api import (
    buttons,
    event_callback,
    first_button_click,
    mention,
    view_submission,
)
from tests.fuzz_counts import count

# Where a refusal is written down on purpose.
REFUSAL_RECORDS = ("audit", "audit_heads", "refusal_counts", "cross_scope_attempts")


def budget(examples: int) -> int:
    """The fixed budget, times ``FUZZ_SCALE`` for a longer hunt (``FUZZ_SCALE=20``)."""
    return examples * int(os.environ.get("FUZZ_SCALE", "1"))


FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HEADER_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"),
    max_size=70,
)


def _kept(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k not in REFUSAL_RECORDS}


async def holds(
    door: Door,
    name: str,
    send: Callable[[], Awaitable[tuple[int, str]]],
    *,
    strict: bool = False,
    refused: bool = False,
) -> int:
    """Send once; assert the door held. ``strict``: a 4xx may not even record a refusal;
    ``refused``: the request must be a 4xx (it holds a number no store keeps as sent)."""
    count(name)
    before = await door.state()
    with Logs() as logs:
        status, text = await send()
        after = await door.state()  # background work the request caused, logged too
    assert status < 500, (status, text)
    assert not refused or status >= 400, (status, text)
    logs.assert_clean()
    if 400 <= status < 500:
        assert (after if strict else _kept(after)) == (before if strict else _kept(before))
    return status


# -- Slack ----------------------------------------------------------------------------


@pytest.fixture
async def slack(tmp_path: Path) -> AsyncIterator[SlackDoor]:
    async with slack_door(tmp_path) as door:
        yield door


async def _slack_question(door: SlackDoor) -> Any:
    event = event_callback(mention("deploy web", user="U0ALICE", ts="1699999999.000100"))
    assert (await door.slack(json.dumps(event).encode()))[0] == 200
    calls = await door.fake.wait_for("chat.postMessage", where=lambda c: bool(buttons(c.args)))
    return calls[0]


def _slack_send(door: SlackDoor, body: bytes, content_type: str, headers: dict[str, str] | None):
    async def send() -> tuple[int, str]:
        sent = {"Content-Type": content_type, **signed(body), **(headers or {})}
        return await door.send("/slack/events", body, headers=sent)

    return send


_BENT_SIGNATURE = st.none() | st.fixed_dictionaries(
    {},
    optional={"X-Slack-Request-Timestamp": HEADER_TEXT, "X-Slack-Signature": HEADER_TEXT},
)
_EVENTS = [
    event_callback(mention("deploy web", user="U0ALICE", ts="1700000001.000100")),
    event_callback(
        {
            "type": "message",
            "channel_type": "im",
            "channel": "D0ALICE",
            "user": "U0ALICE",
            "text": "deploy web",
            "ts": "1700000002.000100",
        }
    ),
    {"token": "t", "challenge": "c", "type": "url_verification"},
]


@settings(FUZZ, max_examples=budget(140))
@given(
    body=st.sampled_from(_EVENTS).flatmap(bent).map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=40),
    content_type=st.sampled_from([JSON] * 6 + [FORM, "text/plain", ""]),
    headers=_BENT_SIGNATURE,
)
async def test_fuzz_slack_events(
    slack: SlackDoor, body: bytes, content_type: str, headers: dict[str, str] | None
) -> None:
    send = _slack_send(slack, body, content_type, headers)
    await holds(slack, "slack events", send, strict=True)


@pytest.fixture
async def slack_clicks(slack: SlackDoor) -> tuple[SlackDoor, dict[str, Any]]:
    question = await _slack_question(slack)
    return slack, first_button_click(question, user="U0BOB")


@settings(FUZZ, max_examples=budget(100))
@given(data=st.data())
async def test_fuzz_slack_interactivity(
    slack_clicks: tuple[SlackDoor, dict[str, Any]], data: st.DataObject
) -> None:
    door, base = slack_clicks
    payload = data.draw(bent(base))
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    await holds(door, "slack interactivity", _slack_send(door, body, FORM, None), strict=True)


@settings(FUZZ, max_examples=budget(70))
@given(data=st.data())
async def test_fuzz_slack_view_submissions(
    slack_clicks: tuple[SlackDoor, dict[str, Any]], data: st.DataObject
) -> None:
    door, click = slack_clicks
    token = json.loads(click["actions"][0]["value"])["t"]
    kind = data.draw(st.sampled_from(["ask", "reject", "schema"]))
    metadata = Metadata(token, kind, "C0CHAN", click["message"]["ts"], click["message"]["ts"])
    view = {"type": "modal", "callback_id": "hitl_answer", "private_metadata": metadata.dump()}
    values = {"q0": {"answer": {"type": "radio_buttons", "selected_option": {"value": "0"}}}}
    payload = data.draw(bent(view_submission(view, values, user="U0BOB")))
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    await holds(door, "slack views", _slack_send(door, body, FORM, None), strict=True)


@settings(FUZZ, max_examples=budget(100))
@given(data=st.data())
async def test_fuzz_slack_commands(slack: SlackDoor, data: st.DataObject) -> None:
    words = data.draw(
        st.sampled_from(["extend int_x 1h", "resend int_x", "cancel int_x no", "pending", "stats"])
        | st.text(max_size=40)
    )
    user = data.draw(st.sampled_from(["U0BOB", "U0ALICE"]))
    base = dict(urllib.parse.parse_qsl(command_form(words, user=user).decode()))
    body = urllib.parse.urlencode(data.draw(form_fields(base))).encode()
    await holds(slack, "slack commands", _slack_send(slack, body, FORM, None), strict=True)


# -- Teams ----------------------------------------------------------------------------


@pytest.fixture
async def teams(tmp_path: Path, teams_sdk: str) -> AsyncIterator[TeamsDoor]:
    async with teams_door(tmp_path) as door:
        yield door


@settings(FUZZ, max_examples=budget(140))
@given(data=st.data())
async def test_fuzz_teams_activities(teams: TeamsDoor, data: st.DataObject) -> None:
    bases = [
        message(teams.connector.url, "deploy web"),
        message(teams.connector.url, "deploy web", kind="channel", mention=True),
        {**message(teams.connector.url, ""), "type": "conversationUpdate"},
    ]
    activity = data.draw(st.sampled_from(bases).flatmap(bent))
    await holds(teams, "teams activities", lambda: teams.activity(activity), strict=True)


@settings(FUZZ, max_examples=budget(100))
@given(data=st.data())
async def test_fuzz_teams_invokes(teams: TeamsDoor, data: st.DataObject) -> None:
    if not teams.connector.cards():
        assert (await teams.activity(message(teams.connector.url, "deploy web")))[0] == 201
        await teams.connector.wait_for(teams.connector.cards, what="question card")
    card = card_of(teams.connector.cards()[0].body)
    staging = next(a for a in actions(card) if a["title"] == "staging")
    invoke = execute(teams.connector.url, {**staging["data"], "q0": "0"})
    activity = data.draw(bent(invoke, most=4))
    await holds(teams, "teams invokes", lambda: teams.activity(activity))


# -- console and admin -------------------------------------------------------------


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[tuple[Door, str, str]]:
    """The console with one open question: its token and id."""
    async with Door(tmp_path) as door:
        headers = {"Content-Type": "application/json"}
        body = json.dumps({"text": "deploy web"}).encode()
        assert (await door.send("/api/conversations/ops/messages", body, headers=headers))[0] == 202
        await door.idle()
        _, text = await door.send("/api/conversations/ops", method="GET")
        questions = [q for r in json.loads(text)["runs"] for q in r["questions"]]
        token = questions[0]["token"]
        _, pending = await door.send("/api/admin/pending", method="GET")
        qid = re.findall(r"int_\w+", pending)[0]
        yield door, token, qid


_SEGMENT = st.sampled_from(["ops", "x" * 41, "OPS", "..", "%2e%2e"]) | st.text(max_size=10).map(
    lambda s: urllib.parse.quote(s, safe="") or "x"
)
_CONTENT = st.sampled_from(["application/json"] * 5 + ["text/plain", FORM, ""])
_ORIGIN = st.sampled_from(
    [
        None,
        None,
        None,
        "null",
        "https://127.0.0.1:{port}",
        "http://evil.example",
        "http://127.0.0.1:{port}",
    ]
)


def _headers(content_type: str, origin: str | None, port: int) -> dict[str, str]:
    headers = {"Content-Type": content_type} if content_type else {}
    if origin is not None:
        headers["Origin"] = origin.format(port=port)
    return headers


@settings(FUZZ, max_examples=budget(140))
@given(data=st.data())
async def test_fuzz_console_api(console: tuple[Door, str, str], data: st.DataObject) -> None:
    door, token, _ = console
    route = data.draw(st.sampled_from(["message", "answer", "read"]))
    headers = _headers(data.draw(_CONTENT), data.draw(_ORIGIN), door.port)
    if route == "read":
        path = f"/api/conversations/{data.draw(_SEGMENT)}"
        await holds(door, "console api", lambda: door.send(path, method="GET"))
        return
    if route == "message":
        path = f"/api/conversations/{data.draw(_SEGMENT)}/messages"
        value = data.draw(bent({"text": "deploy web"}))
    else:
        path = "/api/answer"
        value = data.draw(bent({"token": token, "answer": {"answers": {"Env": "staging"}}}))
    body = data.draw(st.just(json.dumps(value).encode()) | st.binary(max_size=30))
    await holds(door, "console api", lambda: door.send(path, body, headers=headers))


@settings(FUZZ, max_examples=budget(120))
@given(data=st.data())
async def test_fuzz_admin_api(console: tuple[Door, str, str], data: st.DataObject) -> None:
    door, _, qid = console
    target = data.draw(st.sampled_from([qid, qid]) | _SEGMENT)
    kind = data.draw(
        st.sampled_from(["pending", "stats", "show", "audit", "cancel", "resend", "extend"])
    )
    if kind in ("pending", "stats", "show", "audit"):
        path = {
            "pending": "/api/admin/pending?"
            + urllib.parse.urlencode(
                data.draw(
                    st.dictionaries(
                        st.sampled_from(["user", "channel", "cursor", "limit", "x"]),
                        st.text(max_size=12),
                        max_size=3,
                    )
                )
            ),
            "stats": "/api/admin/stats",
            "show": f"/api/admin/questions/{target}",
            "audit": f"/api/admin/runs/{target}/audit",
        }[kind]
        await holds(door, "admin api", lambda: door.send(path, method="GET"))
        return
    base = {"cancel": {"reason": "no"}, "resend": {}, "extend": {"duration": "1h"}}[kind]
    body = json.dumps(data.draw(bent(base))).encode()
    headers = _headers(data.draw(_CONTENT), data.draw(_ORIGIN), door.port)
    path = f"/api/admin/questions/{target}/{kind}"
    await holds(door, "admin api", lambda: door.send(path, body, headers=headers))


# -- The agents API (/v1) -------------------------------------------------------------

API_KEY = "k" * 40
_API_KEYS = json.dumps([{"name": "ci", "key": API_KEY, "routes": ["console:*"]}])
_ASK = {
    "idempotency_key": "fuzz",
    "kind": "ask_user",
    "payload": {"questions": [{"question": "Which env?", "header": "Env", "options": []}]},
    "route": {"surface": "console", "conversation": "ops"},
}
_APPROVAL = {
    "idempotency_key": "fuzz-approval",
    "kind": "approval",
    "payload": {"action": "deploy", "summary": "Deploy web", "arguments": {}, "risk": "low"},
    "route": {"surface": "console", "conversation": "ops"},
    "answerers": ["anyone"],
    "metadata": {"ticket": 7},
}
_FORM = {
    "idempotency_key": "fuzz-form",
    "kind": "form",
    "payload": {
        "title": "Who?",
        "message": "Tell us.",
        "schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["name"],
        },
    },
    "route": {"surface": "console", "conversation": "ops"},
}
_BEARER = st.sampled_from(
    [f"Bearer {API_KEY}"] * 6 + ["", "Bearer", f"bearer {API_KEY}", "Basic x"]
)


@pytest.fixture(params=BACKENDS)
async def agents_api(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Door, str]]:
    """/v1 with one closed question, on each backend: the same inputs must be answered alike."""
    # One closed question, so a fuzzed wait never holds the request.
    async with door_on(request.param, tmp_path, BOT_API_KEYS=_API_KEYS) as door:
        headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
        status, text = await door.send("/v1/questions", json.dumps(_ASK).encode(), headers=headers)
        assert status == 201, text
        qid = json.loads(text)["id"]
        cancel = f"/v1/questions/{qid}/cancel"
        assert (await door.send(cancel, b"{}", headers=headers))[0] == 200
        yield door, qid


@settings(FUZZ, max_examples=budget(140))
@given(data=st.data())
async def test_fuzz_agents_api(agents_api: tuple[Door, str], data: st.DataObject) -> None:
    door, qid = agents_api
    headers = {"Authorization": data.draw(_BEARER), "Content-Type": data.draw(_CONTENT)}
    target = data.draw(st.sampled_from([qid, qid, f"{qid}%00"]) | _SEGMENT)
    kind = data.draw(st.sampled_from(["create", "create", "get", "list", "cancel"]))
    if kind in ("get", "list"):
        names = ["wait", "status", "limit", "cursor", "run_ref", "x"]
        query = data.draw(
            st.dictionaries(
                st.sampled_from(names), st.text(max_size=8) | st.just("r\x00"), max_size=3
            )
        )
        if kind == "get" and target != qid:
            query.pop("wait", None)  # an open question would hold the request
        path = f"/v1/questions/{target}" if kind == "get" else "/v1/questions"
        path += "?" + urllib.parse.urlencode(query) if query else ""
        await holds(door, "agents api", lambda: door.send(path, method="GET", headers=headers))
        return
    if kind == "create":
        path = "/v1/questions"
        base = data.draw(st.sampled_from([_ASK, _APPROVAL, _FORM, _EDITABLE]))
        value = data.draw(bent(base) | spiked(base) | numbered(base))
    else:
        path = f"/v1/questions/{target}/cancel"
        value = data.draw(bent({"reason": "not needed"}) | spiked({"reason": "not needed"}))
    body = data.draw(st.just(json.dumps(value).encode()) | st.binary(max_size=30))
    unkept = body == json.dumps(value).encode() and first_unkept_number(value) is not None
    await holds(door, "agents api", lambda: door.send(path, body, headers=headers), refused=unkept)


# -- approve with changes and forms, answered on the console ---------------------------

_ARGUMENTS = {"service": "web", "replicas": 2, "options": {"limit": 1}, "note": None, "on": True}
_EDITABLE = {
    "idempotency_key": "fuzz-edit",
    "kind": "approval",
    "payload": {
        "action": "deploy",
        "summary": "Deploy web",
        "arguments": _ARGUMENTS,
        "arguments_schema": {
            "type": "object",
            "properties": {
                "service": {"type": "string"},
                "replicas": {"type": "integer", "minimum": 0, "maximum": 50},
                "ratio": {"type": "number"},
                "options": {"type": "object"},
            },
            "required": ["service"],
        },
    },
    "allow": ["approve", "reject", "edit", "respond"],
    "route": {"surface": "console", "conversation": "edits"},
    "answerers": ["anyone"],
    # One person answers: a quorum never reached keeps it open, so every edit is checked.
    "policy": {"quorum": 50},
}
_FORM_ANSWER = {"name": "ada", "n": "3", "ratio": 0.5, "ok": "true"}
_FORM_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "n": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number"},
        "ok": {"type": "boolean"},
    },
    "required": ["name"],
}
_FORMS = itertools.count()


async def _console_token(door: Door, conversation: str) -> str:
    _, text = await door.send(f"/api/conversations/{conversation}", method="GET")
    (token,) = [q["token"] for r in json.loads(text)["runs"] for q in r["questions"]]
    return str(token)


async def _answered_on_console(door: Door, name: str, sent: Any) -> None:
    """``sent`` as the body of the console's answer: the door holds, and refuses it when it
    holds a number no store keeps as sent."""
    body = json.dumps(sent).encode()
    headers = {"Content-Type": "application/json"}
    unkept = first_unkept_number(sent) is not None
    await holds(door, name, lambda: door.send("/api/answer", body, headers=headers), refused=unkept)


@pytest.fixture(params=BACKENDS)
async def answering(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Door, str]]:
    """The console with the agents API on each backend, and the token of an approval that
    allows edits (under a quorum one person never reaches, so it stays open)."""
    async with door_on(
        request.param, tmp_path, BOT_API_KEYS=_API_KEYS, BOT_API_CREATES_PER_MINUTE=100_000
    ) as door:
        await _asked(door, _EDITABLE)
        yield door, await _console_token(door, "edits")


async def _asked(door: Door, body: dict[str, Any]) -> None:
    headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    status, text = await door.send("/v1/questions", json.dumps(body).encode(), headers=headers)
    assert status == 201, text


@settings(FUZZ, max_examples=budget(80))
@given(data=st.data())
async def test_fuzz_console_edits(answering: tuple[Door, str], data: st.DataObject) -> None:
    """Edits holding huge integers, NaN, Infinity, deep JSON text or deep JSON, of arguments
    the schema lists and of those it does not: a 4xx naming them, or counted."""
    door, token = answering
    base = {"token": token, "answer": {"decision": "edit", "arguments": dict(_ARGUMENTS)}}
    await _answered_on_console(door, "console edits", data.draw(numbered(base) | bent(base)))


@settings(FUZZ, max_examples=budget(60))
@given(data=st.data())
async def test_fuzz_console_form_answers(answering: tuple[Door, str], data: st.DataObject) -> None:
    """A form's answer holding huge integers (as JSON or typed), NaN or Infinity: a 4xx
    naming the field, or the form answered; each example answers a form of its own."""
    door, _ = answering
    conversation = f"form-{next(_FORMS)}"
    asked = {
        "idempotency_key": conversation,
        "kind": "form",
        "payload": {"title": "Who?", "message": "Tell us.", "schema": _FORM_SCHEMA},
        "route": {"surface": "console", "conversation": conversation},
    }
    await _asked(door, asked)
    token = await _console_token(door, conversation)
    value = data.draw(numbered(_FORM_ANSWER) | bent(_FORM_ANSWER))
    await _answered_on_console(door, "console forms", {"token": token, "answer": value})
