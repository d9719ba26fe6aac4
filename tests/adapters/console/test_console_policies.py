"""Approval policies on the console: the requester refused, a quorum counted per person."""

from __future__ import annotations

from aiohttp import encode_basic_auth

from bot.contract.models import Policy
from bot.service.answering.policy import RequesterOrApprovers
from tests.adapters.console.console_support import WHICH_ENV, Console, ConsoleFactory

USERS = {"ana": "ana's own long password", "bo": "bo's own long password", "cy": "cy's password!"}


def auth(user: str) -> dict[str, str]:
    return {"Authorization": encode_basic_auth(user, USERS[user])}


async def _approval(make_console: ConsoleFactory, **policy: object) -> tuple[Console, str]:
    console = await make_console(
        users=USERS,
        policy=RequesterOrApprovers(anyone=True),
        policies={"approval": Policy.model_validate(policy)},
    )
    origin = str(console.client.make_url("/")).rstrip("/")
    sent = await console.client.post(
        "/api/conversations/c-test-1/messages",
        json={"text": "deploy web"},
        headers={**auth("ana"), "Origin": origin},
    )
    assert sent.status == 202
    await console.service.wait_idle()
    feed = await console.feed(headers=auth("ana"))
    asked = next(
        q for run in feed["runs"] for q in run["questions"] if q["status"] == "outstanding"
    )
    done = await console.answer(
        asked["token"], {"answers": {WHICH_ENV: "staging"}}, headers=auth("ana")
    )
    assert done.status == 200
    feed = await console.feed(headers=auth("ana"))
    approval = next(
        q for run in feed["runs"] for q in run["questions"] if q["status"] == "outstanding"
    )
    assert approval["kind"] == "approval"
    return console, approval["token"]


async def test_the_requester_is_refused_with_a_sentence_and_nothing_spent(
    make_console: ConsoleFactory,
) -> None:
    console, token = await _approval(make_console, requester_may_answer=False)
    for decision in ("approve", "reject"):
        refused = await console.answer(token, {"decision": decision}, headers=auth("ana"))
        assert refused.status == 403
        body = await refused.json()
        assert body["ok"] is False and "only someone else" in body["error"]
    approved = await console.answer(token, {"decision": "approve"}, headers=auth("bo"))
    assert approved.status == 200 and (await approved.json())["ok"] is True
    feed = await console.feed(headers=auth("ana"))
    assert feed["runs"][0]["status"] == "completed"


async def test_a_quorum_of_two_on_the_console(make_console: ConsoleFactory) -> None:
    console, token = await _approval(make_console, quorum=2)
    first = await console.answer(token, {"decision": "approve"}, headers=auth("bo"))
    assert first.status == 200
    assert "1 of 2 approved" in (await first.json())["message"]
    again = await console.answer(token, {"decision": "approve"}, headers=auth("bo"))
    assert again.status == 409 and "already answered" in (await again.json())["error"]
    feed = await console.feed(headers=auth("ana"))
    assert feed["runs"][0]["status"] == "paused"
    second = await console.answer(token, {"decision": "approve"}, headers=auth("cy"))
    assert second.status == 200
    feed = await console.feed(headers=auth("ana"))
    assert feed["runs"][0]["status"] == "completed"
