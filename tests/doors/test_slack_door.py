"""``/slack/events``: 401 before the signature is proven, 400 after, never a 5xx or a traceback.

Each case is one a request that is not what Slack sends once got a 500
for (or started a run with); a refused request changes nothing stored and
makes no Web API call. A replayed signed request is answered as the first
was and applies nothing twice.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.slack._bridge import SlackBridge
from adapters.slack._edge import InProcessSignatures
from bot.service.running.runs import RUN_SERVICE
from tests.doors._doors import Logs
from tests.doors._slack_door import (
    FORM,
    JSON,
    SlackDoor,
    command_form,
    interaction,
    signed,
    slack_door,
)
from tests.fakes.slack_api import (
    Call,
    block_actions,
    buttons,
    event_callback,
    first_button_click,
    mention,
)

BAD_SIGNATURE = "This request is not signed by Slack with this app's signing secret."
BAD_BODY = "This request's body is not a Slack payload."


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[SlackDoor]:
    async with slack_door(tmp_path) as opened:
        yield opened


def _mention_body(**changes: Any) -> dict[str, Any]:
    event = {**mention("deploy web", user="U0ALICE", ts="1699999999.000100"), **changes}
    return event_callback(event)


async def _refused(door: SlackDoor, status: int, sentence: str, *, send: Any) -> None:
    before = await door.state()
    with Logs() as logs:
        got, text = await send()
    assert got == status, text
    assert json.loads(text) == {"ok": False, "error": sentence}
    logs.assert_clean()
    assert await door.state() == before


# "{now}" stands for the current time, put in when the request is sent: a test's
# id must not depend on the clock (each parallel worker collects the tests itself).
@pytest.mark.parametrize(
    "headers",
    [
        {"X-Slack-Request-Timestamp": "abc"},
        {"X-Slack-Request-Timestamp": ""},
        {"X-Slack-Request-Timestamp": "{now}.5"},
        {"X-Slack-Request-Timestamp": "1e9"},
        {"X-Slack-Request-Timestamp": "9" * 400},
        {"X-Slack-Request-Timestamp": "-{now}"},
        {"X-Slack-Signature": "v0=é" + "0" * 63},
        {"X-Slack-Signature": "v0=" + "0" * 64},
        {"X-Slack-Signature": ""},
    ],
    ids=lambda h: repr(next(iter(h.values())))[:24],
)
async def test_a_bad_timestamp_or_signature_header_is_a_401(
    door: SlackDoor, headers: dict[str, str]
) -> None:
    body = json.dumps(_mention_body()).encode()

    async def send() -> tuple[int, str]:
        now = str(int(time.time()))
        bad = {name: value.replace("{now}", now) for name, value in headers.items()}
        sent = {"Content-Type": JSON, **signed(body), **bad}
        return await door.send("/slack/events", body, headers=sent)

    await _refused(door, 401, BAD_SIGNATURE, send=send)


async def test_a_non_utf8_body_is_a_401_unsigned_and_a_400_signed(door: SlackDoor) -> None:
    body = b"\xff\xfe"

    async def unsigned() -> tuple[int, str]:
        headers = {**signed(b"something else"), "Content-Type": JSON}
        return await door.send("/slack/events", body, headers=headers)

    await _refused(door, 401, BAD_SIGNATURE, send=unsigned)
    await _refused(door, 400, BAD_BODY, send=lambda: door.slack(body))
    await _refused(door, 400, BAD_BODY, send=lambda: door.slack(b"payload=\xff\xfe", FORM))


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


MALFORMED: list[tuple[str, bytes, str]] = [
    ("a JSON array", b"[1,2,3]", JSON),
    ("JSON null", b"null", JSON),
    ("not JSON", b"{", JSON),
    ("5,000 deep", _deep(5000).encode(), JSON),
    (
        "5,000 deep event",
        json.dumps(_mention_body())[:-1].encode() + b',"x":' + _deep(5000).encode() + b"}",
        JSON,
    ),
    ("an unknown type", json.dumps({"type": "bogus"}).encode(), JSON),
    ("event not an object", json.dumps({**_mention_body(), "event": [1]}).encode(), JSON),
    ("payload=null", b"payload=null", FORM),
    ("payload a list", b"payload=%5B1%5D", FORM),
    ("payload 5,000 deep", b"payload=" + _deep(5000).encode(), FORM),
    ("payload twice", b"payload=%7B%7D&payload=%7B%7D", FORM),
    ("a form of nothing", b"", FORM),
    ("JSON as text/plain", json.dumps(_mention_body()).encode(), "text/plain"),
    ("JSON as a form", json.dumps(_mention_body()).encode(), FORM),
    ("no content type", json.dumps(_mention_body()).encode(), ""),
]


def _click(**changes: Any) -> dict[str, Any]:
    message = {"ts": "1.1", "blocks": []}
    return {**block_actions({"action_id": "approve:x"}, user="U0ALICE", message=message), **changes}


def _actions(actions: Any) -> bytes:
    return interaction(_click(actions=actions))


SUBMISSION = {
    "type": "view_submission",
    "user": {"id": "U1"},
    "view": {"callback_id": "hitl_answer", "state": {"values": {"a": 1}}},
}

MALFORMED += [
    ('"actions": []', _actions([]), FORM),
    ('"actions": [1]', _actions([1]), FORM),
    ('"actions": "x"', _actions("x"), FORM),
    ("action_id a number", _actions([{"action_id": 5, "value": "v"}]), FORM),
    ("value an object", _actions([{"action_id": "approve:x", "value": {"a": 1}}]), FORM),
    ("user a string", interaction(_click(user="U0ALICE")), FORM),
    (
        "blocks' elements not objects",
        interaction(_click(message={"ts": "1", "blocks": [{"elements": [1]}]})),
        FORM,
    ),
    ("view state not objects", interaction(SUBMISSION), FORM),
    ("a command without a user", command_form("stats").replace(b"user_id=U0BOB&", b""), FORM),
]


@pytest.mark.parametrize(("name", "body", "content_type"), MALFORMED, ids=[m[0] for m in MALFORMED])
async def test_a_signed_body_that_is_not_a_slack_payload_is_a_400(
    door: SlackDoor, name: str, body: bytes, content_type: str
) -> None:
    await _refused(door, 400, BAD_BODY, send=lambda: door.slack(body, content_type))


@pytest.mark.parametrize(
    "changes",
    [{"text": 12345}, {"text": ["deploy web"]}, {"user": 42}, {"user": ["U0ALICE"]}, {"ts": 1.5}],
    ids=repr,
)
async def test_a_wrongly_typed_event_starts_no_run(
    door: SlackDoor, changes: dict[str, Any]
) -> None:
    body = json.dumps(_mention_body(**changes)).encode()
    await _refused(door, 400, BAD_BODY, send=lambda: door.slack(body))


async def test_a_wrongly_typed_team_id_starts_no_run(door: SlackDoor) -> None:
    body = json.dumps({**_mention_body(), "team_id": 7}).encode()
    await _refused(door, 400, BAD_BODY, send=lambda: door.slack(body))


async def test_a_well_formed_mention_still_starts_a_run(door: SlackDoor) -> None:
    before = await door.state()
    status, _ = await door.slack(json.dumps(_mention_body()).encode())
    assert status == 200
    await door.fake.wait_for("chat.postMessage")
    assert await door.state() != before


# -- replays -------------------------------------------------------------------------


async def _question_id(door: SlackDoor) -> str:
    assert (await door.slack(json.dumps(_mention_body()).encode()))[0] == 200
    await door.fake.wait_for("chat.postMessage")
    status, text = await door.slack(command_form("pending"), FORM)
    assert status == 200, text
    return re.findall(r"`(int_\w+)`", text)[-1]


async def test_a_replayed_extend_moves_the_expiry_once(door: SlackDoor) -> None:
    """Three sends of one signed ``/hitl extend <id> 1h``: one extension, three equal answers."""
    question = await _question_id(door)
    body = command_form(f"extend {question} 1h")
    headers = {"Content-Type": FORM, **signed(body)}
    first = await door.send("/slack/events", body, headers=headers)
    assert first[0] == 200 and "white_check_mark" in first[1], first
    after_first = await door.state()
    with Logs() as logs:
        again = [await door.send("/slack/events", body, headers=headers) for _ in range(2)]
    assert again == [first, first]
    logs.assert_clean()
    assert await door.state() == after_first


async def test_a_replayed_resend_posts_one_message(door: SlackDoor) -> None:
    question = await _question_id(door)
    body = command_form(f"resend {question}")
    headers = {"Content-Type": FORM, **signed(body)}
    posted = len(door.fake.of("chat.postMessage"))
    first = await door.send("/slack/events", body, headers=headers)
    assert first[0] == 200, first
    await door.idle()
    after_first = await door.state()
    assert len(door.fake.of("chat.postMessage")) == posted + 1
    assert await door.send("/slack/events", body, headers=headers) == first
    assert await door.state() == after_first
    assert len(door.fake.of("chat.postMessage")) == posted + 1


async def test_the_same_command_signed_again_later_is_a_new_request(door: SlackDoor) -> None:
    """Only the same signature is a replay: a new timestamp is a new request."""
    question = await _question_id(door)
    body = command_form(f"extend {question} 1h")
    one = {"Content-Type": FORM, **signed(body, timestamp=int(time.time()) - 1)}
    two = {"Content-Type": FORM, **signed(body)}
    assert (await door.send("/slack/events", body, headers=one))[0] == 200
    after_one = await door.state()
    assert (await door.send("/slack/events", body, headers=two))[0] == 200
    assert await door.state() != after_one


def _bridge(door: SlackDoor) -> SlackBridge:
    bridge = next(
        r.handler.__self__  # type: ignore[attr-defined]
        for r in door.app.router.routes()
        if getattr(r.handler, "__name__", "") == "_events"
    )
    assert isinstance(bridge, SlackBridge)
    return bridge


def _click_on(question: Call, *, user: str, channel: str = "C0CHAN") -> bytes:
    return interaction(first_button_click(question, user=user, channel=channel))


async def _click(door: SlackDoor, *, user: str, channel: str, question: int) -> bytes:
    """A click on the first button of a fresh demo run's ``question`` (the first: 1; the
    ones before it answered by the requester)."""
    assert (await door.slack(json.dumps(_mention_body()).encode()))[0] == 200
    for asked in range(1, question + 1):
        posted = await door.fake.wait_for(
            "chat.postMessage", where=lambda c: bool(buttons(c.args)), count=asked
        )
        if asked == question:
            return _click_on(posted[-1], user=user, channel=channel)
        assert (await door.slack(_click_on(posted[-1], user="U0ALICE"), FORM))[0] == 200
    raise AssertionError("no such question")


# (environment, the question, who clicks it, in which channel, what the first click is told)
CLICKS = {
    "redeemed": ({}, 1, "U0ALICE", "C0CHAN", None),
    "refused": ({}, 1, "U0ALICE", "C0OTHER", "another conversation"),
    "counted": (
        {"BOT_POLICIES": json.dumps({"approval": {"quorum": 2}}), "BOT_ANYONE_MAY_ANSWER": "true"},
        2,
        "U0CAROL",
        "C0CHAN",
        "counted",
    ),
}


@pytest.mark.parametrize("case", sorted(CLICKS))
async def test_a_click_replayed_to_another_replica_changes_nothing(
    tmp_path: Path, case: str
) -> None:
    """A click keeps no record at the door: its key goes with its spend, its vote or its
    refusal's audit, so a replay that finds no record of its signature (another replica,
    a restart) is acked as the first was, writes nothing and tells nobody again."""
    env, question, user, channel, told = CLICKS[case]
    async with slack_door(tmp_path, **env) as door:
        body = await _click(door, user=user, channel=channel, question=question)
        headers = {"Content-Type": FORM, **signed(body)}
        first = await door.send("/slack/events", body, headers=headers)
        assert first[0] == 200, first
        after_first = await door.state()
        ephemerals = [str(c.args.get("text")) for c in door.fake.of("chat.postEphemeral")]
        if told is None:
            assert ephemerals == []
        else:
            assert len(ephemerals) == 1 and told in ephemerals[0], ephemerals
        _bridge(door).seen = InProcessSignatures()  # no in-process record: another replica
        with Logs() as logs:
            again = await door.send("/slack/events", body, headers=headers)
        assert again == first
        logs.assert_clean()
        assert await door.state() == after_first
        assert len(door.fake.of("chat.postEphemeral")) == len(ephemerals)
        with sqlite3.connect(door.db) as db:
            key = f"slack:{headers['X-Slack-Signature']}"
            assert not list(db.execute("SELECT 1 FROM seen_requests WHERE key = ?", (key,)))


async def test_a_click_from_another_channel_is_refused_without_naming_a_workspace(
    door: SlackDoor,
) -> None:
    """Same workspace, other channel: the refusal says "another conversation", nothing else."""
    click = await _click(door, user="U0ALICE", channel="C0OTHER", question=1)
    status, _ = await door.slack(click, FORM)
    assert status == 200
    told = await door.fake.wait_for("chat.postEphemeral")
    text = str(told[0].args["text"])
    assert "another conversation" in text and "workspace" not in text


async def test_slacks_certificate_check_is_answered(door: SlackDoor) -> None:
    """``ssl_check=1`` (what Slack sends to check a slash command's URL) is a 200, not a 400."""
    status, _ = await door.slack(b"ssl_check=1&token=legacy", FORM)
    assert status == 200


async def test_an_answer_spent_after_the_ack_is_confirmed_to_the_person(
    door: SlackDoor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store was slow, Slack got its ack first: the person is told the answer landed."""
    from adapters.slack import _listeners
    from bot.service.delivering.messages import LATE_ANSWER_RECORDED

    monkeypatch.setattr(_listeners, "ACK_BUDGET_SECONDS", 0.01)
    service = door.app[RUN_SERVICE]
    redeem = service.redeem
    acked = asyncio.Event()

    async def slow_redeem(*args: Any, **kwargs: Any) -> Any:
        await acked.wait()  # the store's write lock, held elsewhere until Slack has its ack
        return await redeem(*args, **kwargs)

    monkeypatch.setattr(service, "redeem", slow_redeem)
    click = await _click(door, user="U0ALICE", channel="C0CHAN", question=1)
    assert (await door.slack(click, FORM))[0] == 200
    acked.set()
    told = await door.fake.wait_for("chat.postEphemeral")
    assert told[0].args["text"] == LATE_ANSWER_RECORDED
