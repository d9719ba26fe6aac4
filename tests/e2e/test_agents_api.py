"""The agents API against a real bot process: ask, answer in chat, wait, webhook."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.e2e._api import Api, api_env, approval, webhook_receiver
from tests.e2e._client import APPROVE, NAME, OPERATOR, ConsoleClient
from tests.e2e._server import StartBot, free_port

pytestmark = pytest.mark.e2e


async def test_a_console_question_is_answered_and_its_waiter_and_webhook_told(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """POST, long-poll, answer on the console page: wait returns the answer, one webhook."""
    async with webhook_receiver(free_port()) as receiver:
        server = await start_bot(**api_env("console:*"), **OPERATOR)
        api = Api(http, server.url)
        body = approval("deploy-1", {"surface": "console", "conversation": "api-1"})
        body["callback_url"] = receiver.url
        status, created = await api.ask(body)
        assert status == 201, created
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
