"""docs/pictures/mcp-gateway/: what a person sees when the gateway asks, drawn by the real
renderers from the question the real gateway asks.

The page's own gateway file and upstream server (docs/agents/mcp-gateway.md), the
gateway in process, called by the ``mcp`` SDK's client under the name Claude Code
gives itself, asking the real app on a loopback port. The console picture is that
question on the console page in headless Chromium, as
tests/adapters/console/test_console_pictures.py draws its own; the Teams picture is
the card the Teams renderer makes of the stored question, drawn by Microsoft's
Adaptive Cards renderer as tests/adapters/teams/test_pictures.py draws its own.
Each PNG has a JSON sidecar (the question as the console served it; the card), with
what changes every run (ids, the token, the times) as placeholders; this test fails
when the code would serve or draw another, and the command in ``REDRAW`` (which the
page quotes) redraws them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.types import Implementation
from playwright.async_api import expect

from adapters.mcp_gateway import Caller, load_gateway_file, new_gateway
from adapters.mcp_gateway._start import caller
from adapters.teams import CardContext, question_card
from bot.client import Bridge
from bot.service.answering.policy import requester_of_run
from bot.service.delivering.messages import who_may_answer_text
from bot.service.running.runs import RUN_SERVICE
from tests.adapters.console.test_console_pictures import (
    VIEWPORT,
    WAIT_MS,
    WRITE,
    encoded,
    sidecar_of,
)
from tests.adapters.mcp_gateway._rig import text_of
from tests.adapters.mcp_gateway.test_gateway_doc import page_files
from tests.adapters.teams._catalogue import ASKED_AT, EXPIRES
from tests.adapters.teams.conftest import open_renderer, require_renderer
from tests.browser import chromium, picture_page
from tests.doors._doors import Door
from tests.e2e._api import API_KEY
from tests.e2e._client import ConsoleClient

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "docs" / "pictures" / "mcp-gateway"
PAGE = ROOT / "docs" / "agents" / "mcp-gateway.md"
REDRAW = (
    "BOT_WRITE_PICTURES=1 .venv/bin/python -m pytest"
    " tests/adapters/mcp_gateway/test_gateway_pictures.py"
)
NAMES = ("console-approval", "teams-approval")
# Where the page's rule asks, and the key the page makes for the gateway.
CONVERSATION = "ops"
KEY_NAME = "gateway"
KEY = {"name": KEY_NAME, "key": API_KEY, "routes": [f"console:{CONVERSATION}"]}
DEPLOY = {"service": "web", "version": "1.5"}
# What a real run's clock puts in the console's question.
TIMES = ("asked_at", "expires_at")


@contextlib.asynccontextmanager
async def gateway_asking(door: Door, folder: Path) -> AsyncIterator[Client]:
    """The page's gateway before the page's upstream, asking ``door``'s ``/v1`` with a key
    named as the page's, called by a client that names itself as Claude Code does."""
    config = load_gateway_file(page_files(folder))
    gateway = new_gateway(config, data_dir=folder / "gw", route=None, answerers=())

    async def caller_for(ctx: ServerRequestContext[Any, Any]) -> Caller:
        return caller(ctx, key=API_KEY, key_name=KEY_NAME)

    async with Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge:
        await gateway.start()
        try:
            server = gateway.server(
                bridge_for=lambda _ctx: contextlib.nullcontext(bridge), caller_for=caller_for
            )
            claude = Implementation(name="claude-code", version="2.1.0")
            async with Client(server, client_info=claude) as client:
                yield client
        finally:
            await gateway.close()
            gateway.journal.close()


def console_sidecar(question: dict[str, Any]) -> dict[str, Any]:
    """As the console pictures' sidecars, with the run's times as placeholders too."""
    sidecar = sidecar_of(question)
    fixed = sidecar["question"]
    for name in TIMES:
        assert isinstance(fixed[name], float | int), name
        fixed[name] = f"<{name}>"
    return sidecar


async def teams_card(door: Door, interrupt_id: str) -> dict[str, Any]:
    """The Teams card of the stored question, with the Teams catalogue's times and
    placeholders for what changes every run (the question's ids, its token)."""
    service = door.app[RUN_SERVICE]
    record = await service.stores.ledger.get(interrupt_id)
    assert record is not None
    run = await service.stores.runs.get(record.run_id)
    may = service.policy.who_may_answer(record, requester_of_run(run))
    fixed = dataclasses.replace(
        record,
        interrupt_id="<interrupt id>",
        run_id="<run id>",
        issued_at=ASKED_AT,
        expires_at=EXPIRES,
    )
    context = CardContext(
        question=fixed,
        token="<token>",
        asked_for="",
        who_may_answer=who_may_answer_text(may, []),
    )
    return question_card(context)


async def draw_console(door: Door, question: dict[str, Any], path: Path) -> None:
    """The question as the console page draws it, with the console pictures' browser
    settings (test_console_pictures.draw, which opens its in-process console; this app is a
    real one, for the gateway's ``/v1``) and the browser's clock at the question's asking;
    the page must show the tool, its upstream, who asked and the arguments."""
    async with chromium() as browser:
        url = f"http://127.0.0.1:{door.port}/#{CONVERSATION}"
        page = await picture_page(browser, url, at=question["asked_at"], viewport=VIEWPORT)
        shown = page.locator(".question").first
        await shown.wait_for(timeout=WAIT_MS)
        await page.locator("#connection[data-state=live]").wait_for(timeout=WAIT_MS)
        for text in ("ops__deploy", "claude-code (key gateway)", "MCP server ops", "1.5"):
            await expect(shown).to_contain_text(text, timeout=WAIT_MS)
        await shown.screenshot(path=path, animations="disabled", caret="hide")
        await page.context.close()


def checked(name: str, sidecar: dict[str, Any]) -> None:
    path = FOLDER / f"{name}.json"
    if WRITE:
        path.write_text(encoded(sidecar), encoding="utf-8")
    assert path.exists(), f"{path.relative_to(ROOT)} is missing; draw it with: {REDRAW}"
    assert path.read_text(encoding="utf-8") == encoded(sidecar), (
        f"the gateway's approval now shows differently from {name}.png; redraw with: {REDRAW}"
    )


async def test_the_gateway_pictures_show_the_approval_the_gateway_asks(tmp_path: Path) -> None:
    """The approval of the page's deploy names the tool, its upstream, who asked and the
    arguments; its console and Teams sidecars are what the code serves and draws now."""
    async with (
        Door(tmp_path, BOT_API_KEYS=json.dumps([KEY])) as door,
        aiohttp.ClientSession() as http,
        gateway_asking(door, tmp_path) as client,
    ):
        console = ConsoleClient(http, f"http://127.0.0.1:{door.port}")
        call = asyncio.create_task(client.call_tool("ops__deploy", DEPLOY))
        question = await console.outstanding(CONVERSATION, "approval")
        payload = question["payload"]
        assert payload["action"] == "ops__deploy"
        assert payload["arguments"] == DEPLOY
        assert payload["summary"].startswith(
            "claude-code (key gateway) asks to run the tool deploy of the MCP server ops."
        )
        card = await teams_card(door, question["interrupt_id"])
        if WRITE:
            FOLDER.mkdir(parents=True, exist_ok=True)
            await draw_console(door, question, FOLDER / "console-approval.png")
            require_renderer()
            async with open_renderer() as renderer:
                await renderer.picture(card, FOLDER / "teams-approval.png")
        checked("console-approval", console_sidecar(question))
        checked("teams-approval", card)
        await console.answer_ok(question["token"], {"decision": "reject", "comment": "not now"})
        result = await call
    assert result.is_error and "A person rejected this call" in text_of(result)


def test_the_folder_holds_the_pictures_and_the_page_shows_each() -> None:
    """No stray file in docs/pictures/mcp-gateway/, and the gateway's page shows both, with
    the command that redraws them."""
    on_disk = {f.name for f in FOLDER.iterdir()} if FOLDER.exists() else set()
    assert on_disk == {f"{n}.{ext}" for n in NAMES for ext in ("png", "json")}, (
        f"docs/pictures/mcp-gateway/ is out of step; redraw with: {REDRAW}"
    )
    page = PAGE.read_text(encoding="utf-8")
    for name in NAMES:
        assert f"(../pictures/mcp-gateway/{name}.png)" in page, name
    assert REDRAW in page
