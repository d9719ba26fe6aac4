"""A provider for any server that speaks OpenAI's chat completions API."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Sequence
from typing import Any

import aiohttp

from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolDefinition
from bot.kernel.provider import Provider
from bot.providers.base import ProviderError

log = logging.getLogger(__name__)

BACKOFF_BASE_SECONDS = 0.2
RETRY_AFTER_CAP_SECONDS = 5.0
_DETAIL_LIMIT = 300


class _Retryable(Exception):
    """A failure another attempt may cure: 429, 5xx, a dropped connection, a timeout."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def backoff_delay(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait after failed ``attempt`` (1-based); the server's hint wins."""
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP_SECONDS)
    return min(BACKOFF_BASE_SECONDS * 2.0 ** (attempt - 1), RETRY_AFTER_CAP_SECONDS)


class OpenAICompatibleProvider(Provider):
    """Asks an OpenAI-compatible ``/chat/completions`` endpoint for each model round.

    Overload and outages (429, 5xx, connection errors, timeouts) are retried
    with a short backoff; everything else fails at once with a ProviderError
    that says what to check. The API key never appears in an error or a log.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_seconds: float = 60.0,
        session: aiohttp.ClientSession | None = None,
        max_attempts: int = 3,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._base_url = base_url.rstrip("/")
        self._url = f"{self._base_url}/chat/completions"
        self._api_key = api_key
        self._model = model
        self._timeout = aiohttp.ClientTimeout(total=timeout_seconds)
        self._session = session
        self._owns_session = session is None
        self._max_attempts = max_attempts

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> ModelReply:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [_wire_message(m) for m in messages],
        }
        if tools:
            body["tools"] = [_wire_tool(t) for t in tools]
            body["tool_choice"] = "auto"
        last_reason = ""
        for attempt in range(1, self._max_attempts + 1):
            try:
                return await self._post_once(body)
            except _Retryable as failure:
                last_reason = str(failure)
                log.warning("model attempt %d/%d: %s", attempt, self._max_attempts, failure)
                if attempt < self._max_attempts:
                    await asyncio.sleep(backoff_delay(attempt, failure.retry_after))
        raise ProviderError(
            f"the model service is unavailable ({last_reason} after {self._max_attempts} "
            "attempts); try again later."
        )

    async def close(self) -> None:
        # An injected session belongs to the caller, who may share it.
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def _post_once(self, body: dict[str, Any]) -> ModelReply:
        if self._session is None:
            # Created here, not in __init__, because aiohttp binds a session to the running loop.
            self._session = aiohttp.ClientSession()
        headers = {"Authorization": f"Bearer {self._api_key}"}
        try:
            async with self._session.post(
                self._url, json=body, headers=headers, timeout=self._timeout
            ) as response:
                status = response.status
                retry_after = _parse_retry_after(response.headers.get("Retry-After"))
                raw = await response.read()
        except TimeoutError as exc:
            raise _Retryable("timed out") from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise _Retryable(f"connection failed: {type(exc).__name__}") from exc
        except aiohttp.ClientError as exc:
            raise ProviderError(
                f"could not send the request to {self._url} ({type(exc).__name__}); "
                "check the base URL."
            ) from exc
        if status in (401, 403):
            raise ProviderError(
                f"the model service refused the API key (HTTP {status}); check OPENAI_API_KEY."
            )
        if status == 404:
            raise ProviderError(
                f"the model service has no chat completions for model {self._model!r} at "
                f"{self._base_url} (HTTP 404); check the model name and the base URL."
            )
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}", retry_after)
        if status >= 400:
            detail = self._error_detail(raw)
            suffix = f": {detail}" if detail else ""
            raise ProviderError(
                f"the model service rejected the request (HTTP {status}){suffix}; "
                "check the model name and the request it was sent."
            )
        return _parse_reply(raw)

    def _error_detail(self, raw: bytes) -> str:
        try:
            message = json.loads(raw)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            return ""
        if not isinstance(message, str):
            return ""
        # Some servers echo the credential back; redact before truncating so no prefix leaks.
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return message[:_DETAIL_LIMIT]


def _parse_retry_after(value: str | None) -> float | None:
    # Only the delta-seconds form; an HTTP-date is rare from model APIs and falls back to backoff.
    try:
        seconds = float(value or "nan")
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def _wire_tool(tool: ToolDefinition) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def _parse_reply(raw: bytes) -> ModelReply:
    try:
        message = json.loads(raw)["choices"][0]["message"]
        content = message.get("content")
        raw_calls = message.get("tool_calls") or []
        calls = tuple(_parse_call(call["function"]) for call in raw_calls)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError(
            "the model service sent a reply that is not a chat completion (no JSON "
            "choices[0].message); check the base URL points at a chat completions API."
        ) from exc
    return ModelReply(text=content if isinstance(content, str) else "", calls=calls)


def _parse_call(function: Any) -> RequestedCall:
    name = function["name"]
    if not isinstance(name, str):
        raise TypeError("tool call name is not a string")
    raw = function.get("arguments")
    # Some compatible servers send "" or nothing for a tool that takes no arguments.
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return RequestedCall(name, {})
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        # Not raised: the kernel turns this into a tool error the model can read and correct.
        text = raw if isinstance(raw, str) else json.dumps(raw)
        return RequestedCall(name, {"_unparsed_arguments": text})
    return RequestedCall(name, arguments)
