"""The console's less travelled states in headless Chromium, each screenshotted and checked.

Approve with changes (the Edit… panel open, then the closed edit), a question an agent
asked over the agents API, and the admin page. The page is served in process on the
tests' fixed clock, so each screenshot is the same from one run to the next; they land in
test-artifacts/browser/, and with BOT_WRITE_PICTURES=1 in docs/pictures/console/ too
(the command docs/pictures.md gives). Chromium's anti-aliasing of a rounded corner can
differ by one step from one drawing to the next, so a redraw may change a few pixels.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from bot.api import API_QUESTIONS
from bot.app.agent_spec import AgentSpec
from bot.contract.models import CREATE_QUESTION
from bot.human.factory import ask_user_registration
from bot.interactions.approval import approval_registration, approval_tool
from bot.interactions.form import form_registration, form_tool
from bot.providers.scripted import ScriptedProvider
from bot.questions.records import ApiKey
from tests.adapters.console.console_support import CID, Console, ConsoleFactory
from tests.asking_support import asking_script
from tests.browser import picture_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
PICTURES = ROOT / "docs" / "pictures" / "console"
SHOTS = ROOT / "test-artifacts" / "browser"
WRITE = os.environ.get("BOT_WRITE_PICTURES") == "1"
VIEWPORT = {"width": 800, "height": 1000}
WAIT_MS = 15_000
# The pictures this test draws, by name (docs/pictures.md shows each).
STATES = ("approval-edit", "approval-edited", "agent-question", "admin")
AGENT_KEY = ApiKey("release-bot", "", ("*",), key_id="key_release_bot")


def editing_agent() -> AgentSpec:
    """The asking agent, its approvals letting the approver edit or answer instead."""
    return AgentSpec(
        tools=[approval_tool(), form_tool()],
        registrations=[
            ask_user_registration(),
            approval_registration(allow=["approve", "reject", "edit", "respond"]),
            form_registration(),
        ],
        provider=ScriptedProvider(asking_script),
        name="editing-test",
    )


async def opened(browser: Browser, console: Console, path: str) -> Page:
    """``path`` on the console in a fresh page whose clock is the server's, fixed."""
    url = str(console.client.make_url(path))
    return await picture_page(browser, url, at=console.clock(), viewport=VIEWPORT)


async def shoot(target: Page | Locator, name: str) -> None:
    await target.screenshot(path=SHOTS / f"console-{name}.png", animations="disabled", caret="hide")
    if WRITE:
        await target.screenshot(path=PICTURES / f"{name}.png", animations="disabled", caret="hide")


async def style(locator: Locator, prop: str) -> str:
    found: str = await locator.evaluate(f"(node) => getComputedStyle(node)[{prop!r}]")
    return found


async def box(locator: Locator) -> dict[str, float]:
    found = await locator.bounding_box()
    assert found is not None
    return dict(found)


async def test_the_edit_panel_lays_out_one_field_a_row_and_the_closed_edit_says_when_once(
    make_console: ConsoleFactory, browser: Browser
) -> None:
    """Edit… opens a panel with each label above its input; once approved with changes the
    question shows the changes and one time, not the same time again in another format."""
    console = await make_console(spec=editing_agent())
    assert (await console.send("deploy to production")).status == 202
    page = await opened(browser, console, f"/#{CID}")
    question = page.locator(".question").first
    await page.get_by_role("button", name="Edit…").click()
    panel = question.locator(".edit-panel")
    await expect(panel).to_be_visible(timeout=WAIT_MS)
    version = panel.get_by_label("version", exact=True)
    label = panel.locator(".edit-field", has_text="version").locator("span")
    assert await style(panel.locator(".edit-field").first, "flexDirection") == "column"
    assert (await box(version))["y"] >= (await box(label))["y"] + (await box(label))["height"]
    assert await style(panel, "borderTopStyle") == "solid"
    await shoot(question, "approval-edit")
    await version.fill("1.4.0")
    await panel.get_by_role("button", name="Approve with changes").click()
    closed = page.locator('.question[data-status="answered"]').first
    await expect(closed.locator(".decision-edit")).to_have_text(
        "Changes: version 1.5.0 → 1.4.0", timeout=WAIT_MS
    )
    await expect(closed.locator(".closed-text")).to_contain_text("Approved with changes by Ana")
    assert await closed.locator("time").count() == 1
    assert "UTC" not in (await closed.inner_text())
    await shoot(page.locator("#feed"), "approval-edited")


async def test_an_agents_question_is_drawn_on_the_bots_side_not_as_a_persons_message(
    make_console: ConsoleFactory, browser: Browser
) -> None:
    """A question asked over the agents API: its request sits on the left, marked as the
    agent's, not in the right-hand bubble of a person's own message."""
    console = await make_console(api=True)
    raw: dict[str, Any] = {
        "idempotency_key": "release-1",
        "kind": "approval",
        "payload": {
            "action": "deploy",
            "summary": "Deploy web 1.5 to production",
            "arguments": {"service": "web", "version": "1.5"},
            "risk": "high",
        },
        "route": {"surface": "console", "conversation": "agents"},
        "answerers": ["anyone"],
    }
    questions = console.client.server.app[API_QUESTIONS]
    await questions.create(AGENT_KEY, CREATE_QUESTION.validate_python(raw), raw)
    await console.service.wait_idle()
    page = await opened(browser, console, "/#agents")
    asked = page.locator(".agent-message")
    await expect(asked).to_contain_text("api:release-bot", timeout=WAIT_MS)
    assert await page.locator(".user-message").count() == 0
    feed, request = await box(page.locator("#feed")), await box(asked)
    assert request["x"] - feed["x"] < 40, (feed, request)
    await expect(page.locator(".question").first).to_be_visible()
    await shoot(page.locator("#feed"), "agent-question")


async def test_the_admin_page_is_a_styled_table_of_open_questions(
    make_console: ConsoleFactory, browser: Browser
) -> None:
    """The admin page lists the open question in a bordered table with a shaded header."""
    console = await make_console(spec=editing_agent(), admin=True, admins=["console:ana"])
    assert (await console.send("deploy to production")).status == 202
    page = await opened(browser, console, "/admin")
    row = page.locator("#pending tbody tr")
    await expect(row).to_have_count(1, timeout=WAIT_MS)
    header = page.locator("#pending th").first
    assert await style(header, "backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    assert await style(page.locator("#pending"), "borderTopStyle") == "solid"
    await shoot(page, "admin")
