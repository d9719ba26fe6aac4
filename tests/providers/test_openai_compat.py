"""The OpenAI-compatible provider against a real chat-completions server on loopback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolCall, ToolDefinition
from bot.providers.base import ProviderError
from bot.providers.openai_compat import (
    RETRY_AFTER_CAP_SECONDS,
    OpenAICompatibleProvider,
    backoff_delay,
)
from tests.e2e._server import free_port

API_KEY = "sk-test-secret-0123456789"
MODEL = "test-model"
HANG = "hang"  # a scripted reply that never answers, so the client times out


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeChatServer:
    """Replies to each POST with the next scripted (status, body, headers)."""

    base_url: str = ""
    replies: list[tuple[int, Any, dict[str, str]] | str] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.replies.append((status, body, headers or {}))

    def reply_text(self, text: str) -> None:
        self.reply(200, completion({"role": "assistant", "content": text}))

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(Recorded(request.path, dict(request.headers), await request.json()))
        if not self.replies:
            return web.json_response(
                {"error": {"message": "fake server: no reply left"}}, status=418
            )
        scripted = self.replies.pop(0)
        if scripted == HANG:
            await asyncio.wait_for(self.release.wait(), timeout=10)
            return web.json_response({})
        assert not isinstance(scripted, str)
        status, body, headers = scripted
        text = body if isinstance(body, str) else json.dumps(body)
        return web.Response(
            status=status, text=text, headers=headers, content_type="application/json"
        )


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def tool_call(name: str, arguments: str, call_id: str = "call_provider_1") -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


@pytest.fixture
async def server() -> AsyncIterator[FakeChatServer]:
    fake = FakeChatServer()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    fake.base_url = f"http://127.0.0.1:{port}/v1/"
    try:
        yield fake
    finally:
        fake.release.set()
        await runner.cleanup()


@pytest.fixture
async def make_provider(
    server: FakeChatServer,
) -> AsyncIterator[Callable[..., OpenAICompatibleProvider]]:
    made: list[OpenAICompatibleProvider] = []

    def make(**overrides: Any) -> OpenAICompatibleProvider:
        options: dict[str, Any] = {"base_url": server.base_url, "api_key": API_KEY, "model": MODEL}
        provider = OpenAICompatibleProvider(**(options | overrides))
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.close()


HELLO = [Message("system", "be brief"), Message("user", "hi")]


async def test_plain_text_reply(server: FakeChatServer, make_provider: Any) -> None:
    """A text-only completion becomes a ModelReply with that text and no calls."""
    server.reply_text("hello there")
    reply = await make_provider().complete(HELLO, [])
    assert reply == ModelReply(text="hello there")
    assert server.requests[0].path == "/v1/chat/completions"


async def test_tool_calls_reply_maps_to_requested_calls(
    server: FakeChatServer, make_provider: Any
) -> None:
    """tool_calls become RequestedCalls with parsed arguments; null content is empty text."""
    server.reply(
        200,
        completion(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    tool_call("restart", '{"service": "api", "force": true}'),
                    tool_call("status", "{}", call_id="call_provider_2"),
                ],
            }
        ),
    )
    reply = await make_provider().complete(HELLO, [])
    assert reply == ModelReply(
        text="",
        calls=(
            RequestedCall("restart", {"service": "api", "force": True}),
            RequestedCall("status", {}),
        ),
    )


async def test_request_wire_format(server: FakeChatServer, make_provider: Any) -> None:
    """The body carries model, wire messages, tools and tool_choice; the key is a Bearer header."""
    server.reply_text("done")
    messages = [
        Message("system", "sys"),
        Message("user", "restart api"),
        Message("assistant", "", tool_calls=(ToolCall("k-1", "restart", {"service": "api"}),)),
        Message("tool", "restarted", tool_call_id="k-1"),
    ]
    tools = [ToolDefinition("restart", "Restart a service", {"type": "object"})]
    await make_provider().complete(messages, tools)

    sent = server.requests[0]
    assert sent.headers["Authorization"] == f"Bearer {API_KEY}"
    assert sent.body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "restart api"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "k-1",
                        "type": "function",
                        "function": {"name": "restart", "arguments": '{"service": "api"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "k-1", "content": "restarted"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "restart",
                    "description": "Restart a service",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "tool_choice": "auto",
    }


async def test_no_tools_omits_tools_and_tool_choice(
    server: FakeChatServer, make_provider: Any
) -> None:
    """Without tools the body has neither tools nor tool_choice."""
    server.reply_text("ok")
    await make_provider().complete(HELLO, [])
    assert set(server.requests[0].body) == {"model", "messages"}


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_key_names_env_var_not_key(
    server: FakeChatServer, make_provider: Any, status: int
) -> None:
    """401/403 fail at once, point at OPENAI_API_KEY and never echo the key."""
    server.reply(status, {"error": {"message": f"Incorrect API key provided: {API_KEY}"}})
    with pytest.raises(ProviderError, match="OPENAI_API_KEY") as raised:
        await make_provider().complete(HELLO, [])
    assert API_KEY not in str(raised.value)
    assert len(server.requests) == 1


async def test_not_found_names_model_and_base_url(
    server: FakeChatServer, make_provider: Any
) -> None:
    """404 fails at once with the model and base URL to check."""
    server.reply(404, {"error": {"message": "no such model"}})
    with pytest.raises(ProviderError) as raised:
        await make_provider().complete(HELLO, [])
    assert MODEL in str(raised.value)
    assert server.base_url.rstrip("/") in str(raised.value)


async def test_rate_limit_then_success_retries(server: FakeChatServer, make_provider: Any) -> None:
    """A 429 is retried after Retry-After and the next 200 is returned."""
    server.reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
    server.reply_text("after retry")
    reply = await make_provider(max_attempts=3).complete(HELLO, [])
    assert reply.text == "after retry"
    assert len(server.requests) == 2


async def test_server_errors_exhaust_attempts(server: FakeChatServer, make_provider: Any) -> None:
    """Three 500s in a row give up after max_attempts with a try-again-later error."""
    for _ in range(3):
        server.reply(500, {"error": {"message": "boom"}}, {"Retry-After": "0"})
    server.reply_text("never reached")
    with pytest.raises(ProviderError, match="try again later"):
        await make_provider(max_attempts=3).complete(HELLO, [])
    assert len(server.requests) == 3


async def test_bad_request_includes_error_message(
    server: FakeChatServer, make_provider: Any
) -> None:
    """Other 4xx fail at once and carry error.message, truncated to 300 chars."""
    detail = "Invalid 'messages[1].content': expected a string. " + "x" * 400
    server.reply(400, {"error": {"message": detail, "type": "invalid_request_error", "code": None}})
    with pytest.raises(ProviderError, match="HTTP 400") as raised:
        await make_provider().complete(HELLO, [])
    text = str(raised.value)
    assert "Invalid 'messages[1].content': expected a string." in text
    assert "x" * 250 in text
    assert "x" * 301 not in text
    assert len(server.requests) == 1


@pytest.mark.parametrize("arguments", ['{"service": "api"', '["api"]', "42"])
async def test_unusable_arguments_are_passed_on_unparsed(
    server: FakeChatServer, make_provider: Any, arguments: str
) -> None:
    """Arguments that are not a JSON object come back as _unparsed_arguments, not an error."""
    server.reply(
        200, completion({"role": "assistant", "tool_calls": [tool_call("restart", arguments)]})
    )
    reply = await make_provider().complete(HELLO, [])
    assert reply.calls == (RequestedCall("restart", {"_unparsed_arguments": arguments}),)


@pytest.mark.parametrize(
    "body",
    ["<html>bad gateway</html>", {"choices": []}, {"id": "x"}, {"choices": [{"message": None}]}],
)
async def test_malformed_response_raises(
    server: FakeChatServer, make_provider: Any, body: Any
) -> None:
    """A 200 that is not JSON or has no choices[0].message is a ProviderError."""
    server.reply(200, body)
    with pytest.raises(ProviderError, match="not a chat completion"):
        await make_provider().complete(HELLO, [])


async def test_timeout_is_retried(server: FakeChatServer, make_provider: Any) -> None:
    """A request that times out is retried, and the next answer is returned."""
    server.replies.append(HANG)
    server.reply_text("second try")
    reply = await make_provider(timeout_seconds=0.2, max_attempts=2).complete(HELLO, [])
    assert reply.text == "second try"
    assert len(server.requests) == 2


async def test_connection_refused_gives_up(make_provider: Any) -> None:
    """A port nobody listens on is retried, then reported as unavailable."""
    closed_port = free_port()
    provider = make_provider(base_url=f"http://127.0.0.1:{closed_port}/v1", max_attempts=2)
    with pytest.raises(ProviderError, match="try again later"):
        await provider.complete(HELLO, [])


async def test_close_leaves_injected_session_open(server: FakeChatServer) -> None:
    """close() only closes a session the provider created itself."""
    server.reply_text("shared")
    async with aiohttp.ClientSession() as session:
        provider = OpenAICompatibleProvider(
            base_url=server.base_url, api_key=API_KEY, model=MODEL, session=session
        )
        assert (await provider.complete(HELLO, [])).text == "shared"
        await provider.close()
        assert not session.closed


def test_backoff_is_exponential_and_retry_after_is_capped() -> None:
    """Backoff doubles from 0.2 s; a server's Retry-After wins but is capped at 5 s."""
    assert [backoff_delay(n, None) for n in (1, 2, 3)] == pytest.approx([0.2, 0.4, 0.8])
    assert backoff_delay(1, 0.0) == 0.0
    assert backoff_delay(1, 120.0) == RETRY_AFTER_CAP_SECONDS
