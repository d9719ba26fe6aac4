"""The agents API against a real bot process: ask, answer in chat, wait, webhook."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import aiohttp
import pytest

from bot.client import Bridge
from bot.service.delivering.messages import only_they_may_answer
from tests import waiting
from tests.e2e._api import API_KEY, WEBHOOK_SECRET, Api, api_env, approval, webhook_receiver
from tests.e2e._client import APPROVE, NAME, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot, free_port
from tests.e2e._slack import ALICE, CHANNEL, SlackDriver, slack_bot, text_of
from tests.fakes.slack_api import FakeSlack, buttons

pytestmark = pytest.mark.e2e


async def test_a_console_question_is_answered_and_its_waiter_and_webhook_told(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """POST, long-poll, answer on the console page: wait returns the answer, one webhook."""
    async with webhook_receiver(free_port()) as receiver:
        server = await start_bot(**api_env("console:*"), **OPERATOR)
        api = Api(http, server.url)
        route = {"surface": "console", "conversation": "api-1"}
        body = approval("deploy-1", route, callback_url=receiver.url)
        created = await api.created(body)
        assert created["status"] == "open" and created["answer"] is None
        assert "token" not in str(created)
        waiting = asyncio.create_task(api.get(created["id"], wait=30))
        console = ConsoleClient(http, server.url)
        question = await console.outstanding("api-1", "approval")
        await console.answer_ok(question["token"], APPROVE)
        status, answered = await waiting
        assert status == 200, answered
        assert answered["status"] == "answered"
        assert answered["answer"] == {"decision": "approve", "comment": ""}
        assert answered["answered_by"]["name"] == NAME
        await asyncio.wait_for(receiver.arrived.wait(), 15)
        assert [event["type"] for event in receiver.events] == ["question.answered"]
        assert receiver.events[0]["data"]["id"] == created["id"]
        # The same key and body again: the same question, 200.
        assert await api.ask(body) == (200, answered | {"delivery": answered["delivery"]})
    # No log field of any level carries the API key or the webhook secret.
    log = server.log_text()
    assert API_KEY not in log and WEBHOOK_SECRET not in log
    assert WEBHOOK_SECRET.removeprefix("whsec_") not in log


async def test_fifty_racing_posts_make_one_slack_question_answered_by_a_click(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """One idempotency key, 50 concurrent POSTs: one 201, 49 200, one message; a click answers."""
    bot = await slack_bot(start_bot, fake, **api_env("slack:*"))
    api = Api(http, bot.url)
    body = approval("release-7", {"surface": "slack", "conversation": CHANNEL})
    body["answerers"] = [ALICE]
    answers = await asyncio.gather(*(api.ask(body) for _ in range(50)))
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200] * 49 + [201], statuses
    assert len({created["id"] for _, created in answers}) == 1
    question_id = answers[0][1]["id"]
    assert answers[0][1]["answerers"] == [ALICE]
    slack = SlackDriver(http, bot, fake)
    posted = await slack.question()
    # Who may answer is the question's own list, as the message says.
    assert only_they_may_answer(f"<@{ALICE}>") in text_of(posted)
    waiting = asyncio.create_task(api.get(question_id, wait=30))
    status, _ = await slack.click(posted, "Approve")
    assert status == 200
    clicked = time.monotonic()
    status, answered = await waiting
    woke = time.monotonic() - clicked
    print(f"slack answer to the long-poll's answer: {woke * 1000:.0f} ms")
    assert status == 200, answered
    assert answered["status"] == "answered"
    assert answered["answer"]["decision"] == "approve"
    assert answered["answered_by"]["id"].endswith(f":{ALICE}")
    assert answered["answered_by"]["name"] == ALICE.lower()  # the name Slack sent
    assert answered["delivery"]["status"] == "posted"
    await slack.edits_of(posted)  # the message shows the outcome, as for any question
    with_buttons = [c for c in fake.of("chat.postMessage") if buttons(c.args)]
    assert len(with_buttons) == 1, "one question, one chat message"


async def test_a_receiver_that_fails_twice_gets_the_same_event_a_third_time(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """500, 500, then 2xx: three attempts with one webhook-id, the event verified each time."""
    async with webhook_receiver(free_port(), failures=[500, 500]) as receiver:
        server = await start_bot(**api_env("console:*"), **OPERATOR)
        api = Api(http, server.url)
        route = {"surface": "console", "conversation": "api-2"}
        body = approval("retried", route, callback_url=receiver.url)
        created = await api.created(body)
        cancelled = await api.call("POST", f"/v1/questions/{created['id']}/cancel", {})
        assert cancelled[0] == 200
        # Liveness, not speed: the schedule's third attempt comes 35 s after the first.
        await asyncio.wait_for(receiver.arrived.wait(), 60)
        assert len(receiver.ids) == 3 and len(set(receiver.ids)) == 1, receiver.ids
        assert [event["type"] for event in receiver.events] == ["question.cancelled"]
        assert receiver.events[0]["data"]["status"] == "cancelled"


async def test_a_question_nobody_can_see_is_cancelled_at_once_with_the_reason(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """not_in_channel: the question is cancelled with Slack's sentence; the waiter wakes."""
    fake.fail("chat.postMessage", "not_in_channel")
    bot = await slack_bot(start_bot, fake, **api_env("slack:*"))
    api = Api(http, bot.url)
    body = approval("unseen", {"surface": "slack", "conversation": CHANNEL})
    created = await api.created(body)
    status, closed = await api.get(created["id"], wait=30)
    assert status == 200, closed
    assert closed["status"] == "cancelled", closed
    assert "not in the channel" in closed["cancel_reason"]
    assert closed["delivery"]["status"] == "failed"


async def test_a_client_wait_spans_a_sigkill_and_returns_the_answer(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Killed between ask and answer: still open in chat after the restart, answered once."""
    server = await start_bot(**api_env("console:*"), **OPERATOR)
    async with Bridge(server.url, API_KEY) as bridge:
        asked: dict[str, Any] = {
            "arguments": {"version": "1.5"},
            "risk": "high",
            "route": "console:restart",
            "answerers": ["anyone"],
            "idempotency_key": "restart-1",
        }
        question = await bridge.approve("deploy", "Deploy web 1.5", **asked)
        console = ConsoleClient(http, server.url)
        await console.outstanding("restart", "approval")
        waiting = asyncio.create_task(question.wait(timeout=60))
        server.kill()
        await server.restart()
        posted = await console.outstanding("restart", "approval")  # still open in chat
        await console.answer_ok(posted["token"], APPROVE)
        closed = await waiting
        assert closed.status == "answered" and closed.answer == APPROVE
        again = await bridge.approve("deploy", "Deploy web 1.5", **asked)
        assert again.id == question.id  # asked again after the restart: the same question
    feed = await console.feed("restart")
    asked = [q for run in feed["runs"] for q in run["questions"]]
    assert len(asked) == 1, asked


async def test_sigterm_answers_every_long_poll_at_once(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """A stopping bridge answers its waiters with the open object rather than cutting them."""
    server = await start_bot(**api_env("console:*"))
    api = Api(http, server.url)
    body = approval("stopping", {"surface": "console", "conversation": "api-3"})
    created = await api.created(body)
    waits = [asyncio.create_task(api.get(created["id"], wait=30)) for _ in range(5)]
    await ConsoleClient(http, server.url).outstanding("api-3", "approval")
    console = ConsoleClient(http, server.url)

    async def all_five_held() -> bool:
        return (await console.metrics()).get("bot_api_waiting") == 5

    await waiting.eventually(all_five_held, what="the five long-polls held")
    assert await server.terminate(within=15) == 0
    for status, still in await asyncio.gather(*waits):
        assert (status, still["status"]) == (200, "open")


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# Cursors of our own shape that name no row we gave out: a NUL in the id (which
# PostgreSQL cannot compare with), a time that is not a finite number, an empty id.
FOREIGN_CURSORS = ["1700000000.0|q_\x00x", "1.0|\x00", "nan|q_x", "1e999|q_x", "1.0|"]


async def test_a_cursor_the_api_never_gave_out_is_a_400_on_every_store(
    store_env: dict[str, str], start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """GET /v1/questions with a forged cursor, and the admin's pending with a forged ``after``:
    a 4xx with the sentence on SQLite and PostgreSQL, no 5xx, nothing logged at ERROR."""
    server = await start_bot(**api_env("console:*"), **OPERATOR, **store_env)
    api = Api(http, server.url)
    created = await api.created(approval("paged", {"surface": "console", "conversation": "p-1"}))
    for text in FOREIGN_CURSORS:
        status, refused = await api.call("GET", "/v1/questions", cursor=_cursor(text))
        assert status == 400, (text, refused)
        assert refused["error"]["message"] == "cursor is not one this API gave out.", refused
    status, page = await api.call("GET", "/v1/questions", limit=1)
    assert status == 200 and [q["id"] for q in page["data"]] == [created["id"]]
    for after in ["\x00", "1\x00", "9" * 40, "-1", "x"]:
        async with http.get(f"{server.url}/api/admin/pending", params={"after": after}) as shown:
            body = await shown.json()
            assert shown.status == 422, (after, body)
            assert body["ok"] is False and body["message"].endswith("."), body
    server.assert_log_clean()
