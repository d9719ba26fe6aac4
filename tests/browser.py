"""Debian's headless Chromium, launched one way for every browser test.

The flags keep it off the network it cannot reach here (no background
fetches, no component updates, no QUIC); a missing Chromium skips on a
developer's machine and fails in CI, which must run these tests.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, ViewportSize, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
# Where browser tests leave their screenshots (kept by CI as artifacts, never in docs/).
SHOTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "browser"
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


def require_chromium() -> None:
    """Missing Chromium skips locally and fails in CI."""
    if not CHROMIUM.exists():
        missing = "Debian chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; CI must run the browser tests")
        pytest.skip(missing)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """A fresh browser, closed on the way out."""
    require_chromium()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A browser per test, with the screenshot folder made (``tests/conftest.py`` offers it)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    async with chromium() as launched:
        yield launched


async def picture_page(
    browser: Browser, url: str, *, at: float, viewport: Mapping[str, int]
) -> Page:
    """``url`` in a fresh page set as the docs' pictures are drawn: ``viewport`` at scale 1,
    en-GB in UTC, and the browser's clock fixed at ``at`` (the server's), so that the times a
    page writes from the browser's clock ("in 1 d") are the same on any day it is redrawn."""
    size = ViewportSize(width=viewport["width"], height=viewport["height"])
    context = await browser.new_context(
        viewport=size, device_scale_factor=1, locale="en-GB", timezone_id="UTC"
    )
    page = await context.new_page()
    await page.clock.set_fixed_time(datetime.fromtimestamp(at, UTC))
    await page.goto(url)
    return page
