"""The console page in Debian's headless Chromium: a whole deploy, and an expiry."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, async_playwright, expect

from tests.e2e._client import DEPLOY_REPORT, NO_DECISION
from tests.e2e._server import ROOT, StartBot

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = ROOT / "test-artifacts" / "browser"
WAIT_MS = 15_000


@pytest.fixture
def chromium() -> Path:
    """Debian's Chromium; missing skips locally but fails in CI, which must run these."""
    if not CHROMIUM.exists():
        missing = "Debian chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; CI must run the browser tests")
        pytest.skip(missing)
    SHOTS.mkdir(parents=True, exist_ok=True)
    return CHROMIUM


@pytest.fixture
async def page(chromium: Path) -> AsyncIterator[Page]:
    """A fresh page in that Chromium; uncaught page errors fail the test."""
    errors: list[str] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(chromium), args=CHROMIUM_ARGS
        )
        try:
            context = await browser.new_context(viewport={"width": 1100, "height": 800})
            opened = await context.new_page()
            opened.on("pageerror", lambda error: errors.append(str(error)))
            yield opened
        finally:
            await browser.close()
    assert not errors, f"the page threw: {errors}"


async def test_deploy_through_the_page(start_bot: StartBot, page: Page) -> None:
    """Type, pick staging, approve: the report shows and both questions read answered."""
    server = await start_bot()
    await page.goto(f"{server.url}/")

    message = page.get_by_label("Message", exact=True)
    await message.fill("deploy web")
    await page.screenshot(path=SHOTS / "01-typed.png")
    await message.press("Enter")

    staging = page.get_by_role("button", name="staging", exact=True)
    await expect(staging).to_be_visible(timeout=WAIT_MS)
    await page.screenshot(path=SHOTS / "02-question.png")
    await staging.click()

    approve = page.get_by_role("button", name="Approve", exact=True)
    await expect(approve).to_be_visible(timeout=WAIT_MS)
    await expect(page.get_by_role("button", name="Reject", exact=True)).to_be_visible()
    await page.screenshot(path=SHOTS / "03-approval.png")
    await approve.click()

    report = page.locator(".bot-message", has_text=DEPLOY_REPORT)
    await expect(report).to_have_count(1, timeout=WAIT_MS)
    await expect(report).to_be_visible()
    await expect(page.locator(".question")).to_have_count(2)
    answered = page.locator('.question[data-status="answered"]')
    await expect(answered).to_have_count(2, timeout=WAIT_MS)
    await expect(page.get_by_role("button", name="Approve", exact=True)).to_have_count(0)
    await expect(page.locator("#banner")).to_be_hidden()
    await page.screenshot(path=SHOTS / "04-report.png", full_page=True)


async def test_expired_question_shows_on_the_page(start_bot: StartBot, page: Page) -> None:
    """With a 2 s TTL the page marks the question expired and shows the run's reply."""
    expired = await _ask_and_let_expire(start_bot, page)
    await expect(page.locator('.question[data-status="outstanding"]')).to_have_count(0)
    await expect(page.get_by_role("button", name="staging", exact=True)).to_have_count(0)
    await expect(expired).to_contain_text("Which environment should I deploy web in?")
    await expect(expired.locator(".closed-text")).to_contain_text("without an answer")
    await page.screenshot(path=SHOTS / "05-expired.png", full_page=True)


async def test_expired_question_shows_no_stray_null(start_bot: StartBot, page: Page) -> None:
    """An expired question with no answer draws its prompt and closing line, nothing else."""
    expired = await _ask_and_let_expire(start_bot, page)
    lines = [line.strip() for line in (await expired.inner_text()).splitlines()]
    assert "null" not in lines, lines


async def _ask_and_let_expire(start_bot: StartBot, page: Page) -> Locator:
    server = await start_bot(BOT_TTL_SECONDS="2", BOT_SWEEP_SECONDS="0.3")
    await page.goto(f"{server.url}/")
    message = page.get_by_label("Message", exact=True)
    await message.fill("deploy web")
    await message.press("Enter")
    expired = page.locator('.question[data-status="expired"]')
    await expect(expired).to_have_count(1, timeout=WAIT_MS)
    await expect(page.locator(".bot-message", has_text=NO_DECISION)).to_be_visible(timeout=WAIT_MS)
    return expired
