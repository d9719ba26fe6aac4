"""Debian's headless Chromium, launched one way for every browser test.

The flags keep it off the network it cannot reach here (no background
fetches, no component updates, no QUIC); a missing Chromium skips on a
developer's machine and fails in CI, which must run these tests.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

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
