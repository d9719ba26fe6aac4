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
from dataclasses import replace
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
from bot.questions.records import ApiKey, QuestionStatus
from tests.adapters.console.console_support import (
    CID,
    HOSTILE,
    HOSTILE_SHOWN,
    Console,
    ConsoleFactory,
    Past,
    closed_question,
)
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
    """The admin page lists the open question in a bordered table with a shaded header, and
    below it the history of closed ones, in the same kind of table."""
    console = await make_console(spec=editing_agent(), admin=True, admins=["console:ana"])
    assert (await console.send("deploy to production")).status == 202
    yesterday = int(console.clock() // 86400) - 1
    for past in (
        Past(1, QuestionStatus.ANSWERED, "slack", "slack:T1:U2", "slack:T1:U7", "approve"),
        Past(2, QuestionStatus.CANCELLED, "console", "console:bo", "console:ana"),
    ):
        await closed_question(console.service.stores, replace(past, day=yesterday))
    page = await opened(browser, console, "/admin")
    row = page.locator("#pending tbody tr")
    await expect(row).to_have_count(1, timeout=WAIT_MS)
    await expect(page.locator("#history tbody tr")).to_have_count(2, timeout=WAIT_MS)
    assert await style(page.locator("#history"), "borderTopStyle") == "solid"
    header = page.locator("#pending th").first
    assert await style(header, "backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    assert await style(page.locator("#pending"), "borderTopStyle") == "solid"
    await shoot(page, "admin")


async def test_the_admin_history_fits_a_phone_and_filters_and_pages(
    make_console: ConsoleFactory, browser: Browser
) -> None:
    """At 375 px the history's filters and cards fit the screen; an agent's markup is shown as
    text; a status filter and More go through ``admin history``'s filters and cursor."""
    console = await make_console(admin=True)
    stores = console.service.stores
    statuses = (QuestionStatus.ANSWERED, QuestionStatus.CANCELLED)
    for n in range(25):
        await closed_question(
            stores, Past(n, statuses[n % 2], "slack", "alice", "slack:T1:U7", "approve", day=n + 1)
        )
    long = Past(99, QuestionStatus.ANSWERED, "teams", "b" * 60, "teams:t:" + "u" * 60, "reject")
    hostile = await closed_question(stores, replace(long, summary=HOSTILE, day=40))
    context = await browser.new_context(
        viewport={"width": 375, "height": 812}, device_scale_factor=1, locale="en-GB"
    )
    page = await context.new_page()
    await page.goto(str(console.client.make_url("/admin")))
    rows = page.locator("#history tbody tr")
    await expect(rows).to_have_count(20, timeout=WAIT_MS)
    form = page.locator("#history-filters")
    await expect(form).to_be_visible()
    for label in ("Status", "Channel", "Surface", "Asked by", "Decided by", "Decision"):
        await expect(form.get_by_label(label)).to_be_visible()
    first = page.locator(f'#history tr[data-id="{hostile}"]')
    await expect(first.locator('td[data-label="Question"]')).to_have_text(HOSTILE_SHOWN)
    assert await page.locator("#history img").count() == 0
    await expect(first.locator('td[data-label="Outcome"]')).to_have_text("answered: reject")
    await page.screenshot(path=SHOTS / "console-admin-history-phone.png", full_page=True)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the page is {width} px wide"
    for index in range(await form.locator("input, select, button").count()):
        control = await box(form.locator("input, select, button").nth(index))
        assert control["x"] >= 0 and control["x"] + control["width"] <= 375, (index, control)

    await page.locator("#history-more").click()
    await expect(rows).to_have_count(26, timeout=WAIT_MS)
    await expect(page.locator("#history-more")).to_be_hidden()
    await form.get_by_label("Status").select_option("cancelled")
    await form.get_by_role("button", name="Show").click()
    await expect(rows).to_have_count(12, timeout=WAIT_MS)
    for status in await rows.evaluate_all("(rows) => rows.map((row) => row.dataset.status)"):
        assert status == "cancelled"
    # A browser without a date picker sends what was typed: the bridge's sentence says how.
    await form.get_by_label("Closed since").evaluate("(node) => { node.type = 'text'; }")
    await form.get_by_label("Closed since").fill("someday")
    await form.get_by_role("button", name="Show").click()
    await expect(page.locator("#history-banner")).to_contain_text("YYYY-MM-DD", timeout=WAIT_MS)
    await form.get_by_role("button", name="Clear").click()
    await expect(rows).to_have_count(20, timeout=WAIT_MS)
    await expect(page.locator("#history-banner")).to_be_hidden()
    await context.close()
