"""The upstream MCP servers: one ``mcp.Client`` each, held open by a task of its own.

``mcp.Client`` rather than a ``ClientSessionGroup``: the group's ``call_tool`` is
the bare session's, which refuses the 2026-07-28 ``InputRequiredResult``,
while ``Client`` drives those rounds through the same ``elicitation_callback``
that serves a 2025 ``elicitation/create``. Each connection lives in its own
task, because the SDK's transports hold task groups that must close in the task
that opened them; a connection that died (a crashed child, a closed stream) is
opened again on the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.context import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    Implementation,
    InputRequiredResult,
    InputResponses,
    Tool,
)

from adapters.mcp_gateway._config import SEPARATOR, Upstream
from bot.errors import BotError

log = logging.getLogger(__name__)
T = TypeVar("T")

# What the gateway waits for an upstream to start and list its tools.
CONNECT_SECONDS = 30.0

# (upstream name, the request) -> what the person answered.
Elicited = Callable[[str, ElicitRequestParams], Awaitable[ElicitResult | ErrorData]]


class UpstreamError(BotError):
    """An upstream cannot be reached or failed a call; the message is one sentence."""


@dataclass(frozen=True, slots=True)
class Offered:
    """An upstream's tool as the gateway offers it: prefixed, all else as the upstream lists it."""

    upstream: str
    tool: Tool

    @property
    def name(self) -> str:
        return f"{self.upstream}{SEPARATOR}{self.tool.name}"

    @property
    def listed(self) -> Tool:
        return self.tool.model_copy(update={"name": self.name})


class Connection:
    """One upstream, connected on demand by a task that owns its client."""

    def __init__(self, upstream: Upstream, elicited: Elicited) -> None:
        self.upstream = upstream
        self._elicited = elicited
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    async def client(self) -> Client:
        async with self._lock:
            if self._task is None or self._task.done():
                await self._open()
            assert self._client is not None
            return self._client

    async def tools(self) -> list[Offered]:
        client = await self.client()
        listed = await _bounded(self.upstream.name, client.list_tools(), CONNECT_SECONDS)
        return [Offered(self.upstream.name, tool) for tool in listed.tools]

    async def call(
        self, tool: str, arguments: dict[str, object], *, progress: ProgressFnT | None = None
    ) -> CallToolResult:
        """The call to its end: an upstream's input requests (either style) are answered
        through the elicitation callback."""
        client = await self.client()
        return await self._guarded(
            client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=self.upstream.timeout_seconds,
                progress_callback=progress,
            )
        )

    async def relay(
        self,
        tool: str,
        arguments: dict[str, object],
        *,
        input_responses: InputResponses | None,
        request_state: str | None,
        progress: ProgressFnT | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """One round of a 2026-07-28 call whose input requests the caller answers: the
        upstream's ``InputRequiredResult`` comes back as it is, and the caller's retry
        brings its responses and the upstream's own request state."""
        client = await self.client()
        return await self._guarded(
            client.session.call_tool(
                tool,
                arguments,
                read_timeout_seconds=self.upstream.timeout_seconds,
                progress_callback=progress,
                input_responses=input_responses,
                request_state=request_state,
                allow_input_required=True,
            )
        )

    async def _guarded(self, pending: Awaitable[T]) -> T:
        try:
            return await pending
        except Exception as error:  # noqa: BLE001  an upstream fails in many ways; each is a sentence
            if _closed(error):
                # The child died or the stream ended: the next call opens a new connection.
                await self.close()
            raise UpstreamError(_failed(self.upstream.name, error)) from None

    async def close(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, CONNECT_SECONDS)

    async def _open(self) -> None:
        opened: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(
            self._hold(opened), name=f"mcp-upstream-{self.upstream.name}"
        )
        try:
            self._client = await asyncio.wait_for(asyncio.shield(opened), CONNECT_SECONDS)
        except Exception as error:  # noqa: BLE001  a child that fails to start, a refused URL, ...
            self._task.cancel()
            raise UpstreamError(_failed(self.upstream.name, error, starting=True)) from None

    async def _hold(self, opened: asyncio.Future[Client]) -> None:
        async def elicitation(
            context: ClientRequestContext, params: ElicitRequestParams
        ) -> ElicitResult | ErrorData:
            return await self._elicited(self.upstream.name, params)

        try:
            async with Client(
                _transport(self.upstream),
                elicitation_callback=elicitation,
                client_info=Implementation(name="hitl-bridge-gateway", version="1"),
                cache=None,
            ) as client:
                opened.set_result(client)
                await self._stop.wait()
        except Exception as error:  # noqa: BLE001  the connection's end, however it came
            if not opened.done():
                opened.set_exception(error)
            else:
                log.warning("%s", _failed(self.upstream.name, error))


def _transport(upstream: Upstream) -> Transport:
    if upstream.command is not None:
        env = {name: value.get_secret_value() for name, value in upstream.env.items()}
        return stdio_client(
            StdioServerParameters(
                command=upstream.command[0],
                args=upstream.command[1:],
                env=env or None,
                cwd=upstream.cwd,
            )
        )
    assert upstream.url is not None
    headers = {name: value.get_secret_value() for name, value in upstream.headers.items()}
    http = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30.0, read=upstream.timeout_seconds)
    )
    return _owning(http, streamable_http_client(upstream.url, http_client=http))


@contextlib.asynccontextmanager
async def _owning(http: httpx2.AsyncClient, transport: Transport) -> AsyncIterator[Any]:
    async with http, transport as streams:
        yield streams


async def _bounded(name: str, pending: Awaitable[T], seconds: float) -> T:
    try:
        return await asyncio.wait_for(pending, seconds)
    except Exception as error:  # noqa: BLE001  as in Connection.call
        raise UpstreamError(_failed(name, error)) from None


def _closed(error: BaseException) -> bool:
    if isinstance(error, MCPError):
        return error.error.code == CONNECTION_CLOSED
    return isinstance(error, anyio.ClosedResourceError | anyio.BrokenResourceError)


def _failed(name: str, error: BaseException, *, starting: bool = False) -> str:
    # The first line only, and never a header or an environment value: those are secrets.
    detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
    timed_out = isinstance(error, MCPError) and error.error.code == REQUEST_TIMEOUT
    if isinstance(error, TimeoutError) or timed_out:
        detail = "it did not answer in time"
    doing = "could not be started or reached" if starting else "failed"
    return f"The upstream MCP server {name!r} {doing}: {detail}"
