"""The console pictures in docs/pictures/console/ are what the page draws from today's code.

Each picture is a headless Chromium screenshot of one question on the real
console page, served over loopback by the real RunService with a fixed
clock; beside it, a JSON sidecar holds the question exactly as the console
API served it for that picture (ids and the token replaced by placeholders).
This test rebuilds each question and compares it with its sidecar; when one
differs, the pictures are stale, and one command rewrites them:

    BOT_WRITE_PICTURES=1 .venv/bin/python -m pytest tests/adapters/console/test_console_pictures.py
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.contract.models import Policy
from bot.service.answering.outcomes import Counted, Responder
from bot.service.answering.policy import RequesterOrApprovers
from tests.adapters.console.console_support import CID, Console, ConsoleFactory
from tests.adapters.console.test_console_states_browser import STATES
from tests.asking_support import asking_agent
from tests.browser import chromium, picture_page

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "docs" / "pictures" / "console"
PAGE = ROOT / "docs" / "pictures.md"
WRITE = os.environ.get("BOT_WRITE_PICTURES") == "1"
REWRITE = (
    "BOT_WRITE_PICTURES=1 .venv/bin/python -m pytest"
    " tests/adapters/console/test_console_pictures.py"
)
VIEWPORT = {"width": 800, "height": 1200}
WAIT_MS = 15_000


async def answer_staging(console: Console) -> None:
    """Ana picks staging, as the page would: the served key and value sent back."""
    asked = await console.open_question()
    (item,) = asked["payload"]["questions"]
    staging = next(o["value"] for o in item["options"] if o["label"] == "staging")
    assert (await console.answer(asked["token"], {"answers": {item["key"]: staging}})).status == 200


async def bo_approves(console: Console) -> None:
    """Bo's approval is counted; the question waits for a second one."""
    asked = await console.open_question()
    bo = Responder(id="console:bo", name="bo")
    vote = await console.service.redeem(
        asked["token"], {"decision": "approve"}, responder=bo, scope="console"
    )
    assert isinstance(vote, Counted), vote


@dataclass(frozen=True)
class Picture:
    name: str
    said: str  # what Ana typed; tests/asking_support.py says what the agent asks for it
    then: Callable[[Console], Awaitable[None]] | None = None
    console: dict[str, Any] = field(default_factory=dict)


PICTURES = (
    Picture("ask-options", "deploy web"),
    Picture("ask-several", "plan the release"),
    Picture("approval", "deploy to production"),
    Picture("form", "add on-call"),
    Picture(
        "quorum",
        "deploy to production",
        bo_approves,
        {
            "policy": RequesterOrApprovers(approvers=frozenset({"console:bo"})),
            "policies": {"approval": Policy(quorum=2)},
        },
    ),
    Picture("answered", "deploy web", answer_staging),
)


def sidecar_of(question: dict[str, Any]) -> dict[str, Any]:
    """The question as served, with what changes every run (ids, the token) as placeholders."""
    fixed = dict(question)
    fixed["interrupt_id"] = "<interrupt id>"
    if fixed["token"] is not None:
        fixed["token"] = "<token>"
    return {"viewport": VIEWPORT, "question": fixed}


def encoded(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("picture", PICTURES, ids=[p.name for p in PICTURES])
async def test_each_console_picture_shows_what_the_console_serves(
    make_console: ConsoleFactory, picture: Picture
) -> None:
    """The sidecar matches the question served now; BOT_WRITE_PICTURES=1 redraws both."""
    console = await make_console(spec=asking_agent(), **picture.console)
    assert (await console.send(picture.said)).status == 202
    if picture.then is not None:
        await picture.then(console)
    (question,) = await console.questions()
    sidecar = FOLDER / f"{picture.name}.json"
    if WRITE:
        await draw(console, FOLDER / f"{picture.name}.png")
        FOLDER.mkdir(parents=True, exist_ok=True)
        sidecar.write_text(encoded(sidecar_of(question)))
    assert sidecar.exists(), f"{sidecar.relative_to(ROOT)} is missing; draw it with: {REWRITE}"
    assert sidecar.read_text() == encoded(sidecar_of(question)), (
        f"the console now serves {picture.name!r} differently from its picture;"
        f" redraw the pictures with: {REWRITE}"
    )


async def draw(console: Console, path: Path) -> None:
    """Screenshot the question as Ana's page draws it, at the clock the server runs on."""
    async with chromium() as browser:
        url = str(console.client.make_url(f"/#{CID}"))
        page = await picture_page(browser, url, at=console.clock(), viewport=VIEWPORT)
        question = page.locator(".question")
        await question.first.wait_for(timeout=WAIT_MS)
        await page.locator("#connection[data-state=live]").wait_for(timeout=WAIT_MS)
        await question.first.screenshot(path=path, animations="disabled", caret="hide")
        await page.context.close()


def test_the_folder_holds_exactly_the_pictures_and_the_docs_show_each() -> None:
    """No stray picture or sidecar, and docs/pictures.md shows every one (with the browser
    states' pictures, which have no sidecar: the browser test checks what they show)."""
    names = {p.name for p in PICTURES}
    on_disk = {f.name for f in FOLDER.iterdir()}
    expected = {f"{n}.{ext}" for n in names for ext in ("png", "json")}
    assert on_disk == expected | {f"{n}.png" for n in STATES}, (
        f"docs/pictures/console/ is out of step; redraw the pictures with: {REWRITE}"
    )
    page = PAGE.read_text()
    for name in sorted(names | set(STATES)):
        assert f"(pictures/console/{name}.png)" in page, name
