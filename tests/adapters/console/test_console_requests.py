"""Requests the console turns away: a sentence, the right status, and no damage."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from adapters.console import ConsoleSurface, mount_console
from adapters.console._api import answer_response
from bot.service.answering import outcomes
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.messages import refusal_text
from bot.serving import ALLOWED_HOSTS, SIGN_IN, AllowedHosts, SignIn
from tests.adapters.console.console_support import CID, JSON, WHICH_ENV, Console


async def refused(response: Any, status: int) -> str:
    assert response.status == status, await response.text()
    body = await response.json()
    assert body["ok"] is False
    error: str = body["error"]
    assert error.endswith(".")
    assert "Traceback" not in error
    return error


@pytest.mark.parametrize(
    "body",
    [
        "{not json",
        "[1, 2]",
        '"deploy web"',
        '{"text": 42}',
        '{"text": ["deploy web"]}',
    ],
)
async def test_malformed_message_is_400_with_a_sentence(console: Console, body: str) -> None:
    """Bad JSON or wrong types say what to send, and start nothing."""
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", data=body, headers=JSON
    )
    assert "text" in await refused(response, 400)
    assert await console.service.stores.runs.recent() == []


@pytest.mark.parametrize(
    "body",
    [
        "",
        "{}",
        '{"token": "t"}',
        '{"token": "t", "answer": "staging"}',
        '{"token": 7, "answer": {}}',
        '{"token": "", "answer": {}}',
    ],
)
async def test_malformed_answer_is_400_and_the_server_keeps_serving(
    console: Console, body: str
) -> None:
    """A broken answer request says what to send; the next request is served normally."""
    await console.send("deploy web")
    response = await console.client.post("/api/answer", data=body, headers=JSON)
    assert "token" in await refused(response, 400)
    asked = await console.open_question()
    good = await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    assert good.status == 200


async def test_empty_message_is_400(console: Console) -> None:
    """Whitespace alone is not a message."""
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", json={"text": "  \n "}
    )
    assert "empty" in await refused(response, 400)


async def test_overlong_message_is_413(console: Console) -> None:
    """Text over 4,000 characters is refused with the limit named."""
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", json={"text": "x" * 4001}
    )
    assert "4,000" in await refused(response, 413)
    assert await console.service.stores.runs.recent() == []


@pytest.mark.parametrize("cid", ["Upper", "has_underscore", "x" * 41])
async def test_bad_conversation_id_is_400(console: Console, cid: str) -> None:
    """Conversation ids outside [a-z0-9-]{1,40} are refused on read and on write."""
    read = await console.client.get(f"/api/conversations/{cid}")
    assert "Conversation ids" in await refused(read, 400)
    write = await console.client.post(f"/api/conversations/{cid}/messages", json={"text": "hi"})
    assert "Conversation ids" in await refused(write, 400)


async def test_a_name_in_the_body_is_ignored(console: Console) -> None:
    """Who answered comes from the sign-in (here the loopback operator), never the body."""
    await console.send("deploy web")
    asked = await console.open_question()
    response = await console.client.post(
        "/api/answer",
        json={"token": asked["token"], "answer": {"answers": {WHICH_ENV: "staging"}}, "name": "Bo"},
    )
    assert response.status == 200
    await console.service.wait_idle()
    (first, _approval) = await console.questions()
    assert first["closed_by"] == "Ana"
    assert first["closed_text"].startswith("Answered by Ana at ")


@pytest.mark.parametrize("depth", [33, 5000])
async def test_deeply_nested_json_is_400(console: Console, depth: int) -> None:
    """JSON nested past the limit (or past Python's recursion limit) is a 400 sentence."""
    body = '{"text": ' + "[" * depth + "]" * depth + "}"
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", data=body, headers=JSON
    )
    assert "nested too deeply" in await refused(response, 400)
    assert await console.service.stores.runs.recent() == []


async def test_json_within_the_depth_limit_is_read(console: Console) -> None:
    """Nesting below the limit reaches the handler, which says what it expected instead."""
    body = '{"text": "deploy web", "extra": ' + "[" * 20 + "]" * 20 + "}"
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", data=body, headers=JSON
    )
    assert response.status == 202


@pytest.mark.parametrize(
    ("refusal", "status"),
    [
        (outcomes.AlreadyAnswered("Ana", 1.0), 409),
        (outcomes.AlreadyCancelled("Root", 1.0), 409),
        (outcomes.TokenExpired(), 409),
        (outcomes.NotAllowedToAnswer(), 403),
        (outcomes.ScopeMismatch(), 403),
        (outcomes.TokenInvalid(), 403),
        (outcomes.AnswerInvalid({"answers": "pick one"}), 422),
        (outcomes.StoreUnavailable(), 503),
    ],
)
async def test_each_refusal_has_its_status_and_sentence(
    refusal: outcomes.Refusal, status: int
) -> None:
    """Every refusal maps to one status and carries the shared sentence."""
    response = answer_response(refusal)
    assert response.status == status
    assert response.text is not None
    assert refusal_text(refusal).replace('"', '\\"') in response.text


async def test_unexpected_failure_is_a_sentence_not_a_trace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler that breaks (here: no service on the app) answers 500 with one sentence."""
    app = web.Application()
    app[SIGN_IN] = SignIn(None)
    app[ALLOWED_HOSTS] = AllowedHosts.loopback(0)
    mount_console(app, ConsoleSurface(), policy=RequesterOrApprovers())
    async with TestClient(TestServer(app)) as client:
        response = await client.get("/api/conversations")
        error = await refused(response, 500)
        assert "unexpected error" in error
        page = await client.get("/")
        assert page.status == 200
    assert "console request failed" in caplog.text
