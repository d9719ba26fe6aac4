"""The composed app with an OpenAI-compatible model: the demo's tools, driven by that model.

A loopback server speaks chat completions and plays the model: it asks
ask_user, then approval, then calls deploy, then answers, deciding from the
transcript it is sent, as a real model would.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.service.running.runs import RUN_SERVICE
from tests.support import app_server

JSON = {"Content-Type": "application/json"}


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "provider-id",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def text(content: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": content}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


class FakeModel:
    """Chooses its next step from the tool results already in the transcript."""

    def __init__(self) -> None:
        self.seen_tools: list[list[str]] = []

    async def handle(self, request: web.Request) -> web.Response:
        assert request.headers["Authorization"] == "Bearer sk-loopback-key-0123456789"
        body = await request.json()
        self.seen_tools.append([tool["function"]["name"] for tool in body.get("tools", [])])
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not results:
            question = {
                "question": "Which environment?",
                "header": "Env",
                "options": [{"label": "staging"}, {"label": "production"}],
            }
            return web.json_response(tool_call("ask_user", {"questions": [question]}))
        if len(results) == 1:
            arguments = {"service": "web", "environment": "staging"}
            return web.json_response(
                tool_call(
                    "approval",
                    {"action": "deploy web", "summary": "web to staging", "arguments": arguments},
                )
            )
        if len(results) == 2:
            return web.json_response(
                tool_call("deploy", {"service": "web", "environment": "staging"})
            )
        return web.json_response(text(f"Done: {results[-1]}"))


@pytest.fixture
async def model() -> AsyncIterator[tuple[FakeModel, str]]:
    fake = FakeModel()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield fake, str(server.make_url("/v1"))
    await server.close()


async def feed(client: TestClient[Any, Any]) -> dict[str, Any]:
    response = await client.get("/api/conversations/ops")
    assert response.status == 200
    data: dict[str, Any] = await response.json()
    return data


async def answer_open_question(client: TestClient[Any, Any], answer: dict[str, Any]) -> None:
    for _ in range(200):
        questions = [q for r in (await feed(client))["runs"] for q in r["questions"]]
        open_ones = [q for q in questions if q["status"] == "outstanding"]
        if open_ones:
            body = {"token": open_ones[0]["token"], "answer": answer}
            response = await client.post("/api/answer", data=json.dumps(body), headers=JSON)
            assert response.status == 200, await response.text()
            return
        await client.app[RUN_SERVICE].wait_idle()
    raise AssertionError("no question was posted")


async def test_the_demo_tools_run_with_a_configured_model(
    model: tuple[FakeModel, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_* set: the model is asked with the demo's tools, pauses twice, deploys, reports."""
    fake, base_url = model
    monkeypatch.chdir(tmp_path)
    server = app_server(
        tmp_path, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-loopback-key-0123456789"
    )
    async with TestClient(server) as client:
        body = {"text": "please deploy web"}
        started = await client.post(
            "/api/conversations/ops/messages", data=json.dumps(body), headers=JSON
        )
        assert started.status == 202
        await answer_open_question(client, {"answers": {"Which environment?": "staging"}})
        await answer_open_question(client, {"decision": "approve", "comment": ""})
        await client.app[RUN_SERVICE].wait_idle()
        run = (await feed(client))["runs"][0]
    assert run["status"] == "completed"
    assert run["final_text"] == (
        "Done: Deployed web 1.5.0 to staging (was 1.4.2). Health checks green."
    )
    assert {"ask_user", "approval", "deploy", "rollback", "service_status"} <= set(
        fake.seen_tools[0]
    )
