"""An upstream MCP server for the gateway's tests, written with the ``mcp`` SDK.

``python upstream_server.py`` serves over stdio; ``--http PORT`` over Streamable
HTTP at ``/mcp``. Every run of ``deploy`` appends a line to the file
``UPSTREAM_LOG`` names, so a test counts how often the side effect happened.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("ops")


def _logged(line: str) -> Path:
    """``line`` appended to the file UPSTREAM_LOG names; that file."""
    log = Path(os.environ["UPSTREAM_LOG"])
    with log.open("a", encoding="utf-8") as out:
        out.write(f"{line}\n")
    return log


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def status(service: str) -> str:
    """The service's status; reads only."""
    return f"{service} is up"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def deploy(service: str, version: str) -> str:
    """Deploy a version of a service (destructive)."""
    _logged(f"deploy {service} {version}")
    return f"deployed {service} {version}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
async def slow_deploy(service: str) -> str:
    """Deploy, taking until the file ``release`` beside UPSTREAM_LOG appears."""
    release = _logged(f"slow_deploy {service} started").with_name("release")
    # The test's process makes the file: there is no event in this process to wait on.
    while not release.exists():  # noqa: ASYNC110
        await anyio.sleep(0.02)
    _logged(f"slow_deploy {service} done")
    return f"deployed {service} slowly"


@server.tool()
def restart(service: str) -> str:
    """Restart a service (no annotations at all)."""
    return f"restarted {service}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def crash() -> str:
    """Exit the server's process mid-call, as a crashing upstream does."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def hang() -> str:
    """Never answer, as a hung upstream does."""
    await anyio.sleep_forever()
    return "unreachable"


class Confirmation(BaseModel):
    reason: str


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def purge_queue(queue: str, ctx: Context) -> str:
    """Purge a queue, after asking why with the 2025 style ``ctx.elicit`` (a request to the
    client mid-call, which only a 2025-era connection carries: run with --legacy)."""
    answered = await ctx.elicit(f"Why purge the queue {queue}?", Confirmation)
    if answered.action == "accept":
        return f"purged {queue}: {answered.data.reason}"
    return f"not purged: {answered.action}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def connect_billing(ctx: Context) -> str:
    """Connect the billing account, after the user signs in at the URL ``SIGN_IN_URL`` names:
    a URL-mode elicitation (a request mid-call: run with --legacy)."""
    answered = await ctx.elicit_url(
        "Sign in to billing to connect it.", os.environ["SIGN_IN_URL"], "billing-1"
    )
    return f"billing: {answered.action}"


def why(service: str) -> Elicit[Confirmation]:
    # The SDK asks as the connection's protocol has it: an InputRequiredResult at
    # 2026-07-28, an elicitation/create request mid-call before.
    return Elicit(f"Why purge the cache of {service}?", Confirmation)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def purge_cache(
    service: str, answered: Annotated[ElicitationResult[Confirmation], Resolve(why)]
) -> str:
    """Purge a cache, after asking the user why (an elicitation)."""
    if isinstance(answered, AcceptedElicitation):
        return f"purged {service}: {answered.data.reason}"
    return f"not purged: {answered.action}"


async def _legacy() -> None:
    """Serve as a server of the 2025 era only (as SDK 1.x servers do): the handshake loop,
    which answers a 2026-07-28 probe with an error, so the client falls back to initialize."""
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        options = lowlevel.create_initialization_options()
        await serve_loop(lowlevel, read, write, lifespan_state=state, init_options=options)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--legacy"]:
        anyio.run(_legacy)
    elif sys.argv[1:2] == ["--http"]:
        import uvicorn

        app = server.streamable_http_app(stateless_http=False)
        token = os.environ["UPSTREAM_TOKEN"]

        async def keyed(scope: Any, receive: Any, send: Any) -> None:
            # The token the gateway's file names by ${VAR}: without it, 401.
            headers = dict(scope.get("headers") or [])
            if (
                scope["type"] == "http"
                and headers.get(b"authorization") != f"Bearer {token}".encode()
            ):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no token"})
                return
            await app(scope, receive, send)

        uvicorn.run(keyed, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
