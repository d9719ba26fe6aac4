"""Headless Chromium for the in-process console, as the e2e browser tests launch it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import Browser, async_playwright

from tests.e2e.test_console_browser import CHROMIUM, CHROMIUM_ARGS


def require_chromium() -> None:
    """Missing Chromium skips locally and fails in CI, as for the e2e browser tests."""
    if not CHROMIUM.exists():
        missing = "Debian chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; CI must run the browser tests")
        pytest.skip(missing)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    require_chromium()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()
