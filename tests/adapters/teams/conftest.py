"""Microsoft's Adaptive Cards renderer (npm ``adaptivecards``) in Debian's headless Chromium.

``tests/adaptivecards/`` pins it with markdown-it (``make test`` runs ``npm ci`` there);
its page is opened from a file, so nothing reaches the network. Missing pieces skip these
tests on a developer's machine and fail them in CI, which must run them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from tests.browser import CHROMIUM, chromium

ROOT = Path(__file__).resolve().parents[3]
RENDERER = ROOT / "tests" / "adaptivecards"
PAGE = RENDERER / "render.html"
INSTALL = "cd tests/adaptivecards && npm ci"


def _missing() -> str:
    if not CHROMIUM.exists():
        return "Debian chromium is not installed (apt-get install chromium)"
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node and npm are not installed (apt-get install nodejs npm)"
    if not (RENDERER / "node_modules" / "adaptivecards" / "package.json").exists():
        return f"the Adaptive Cards renderer is not installed ({INSTALL}, or make test)"
    return ""


class Renderer:
    """One page with the renderer loaded; ``render`` parses, validates and draws a card."""

    def __init__(self, page: Page) -> None:
        self.page = page

    async def render(self, card: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.page.evaluate("(card) => renderCard(card)", card)
        return result

    async def picture(self, card: dict[str, Any], path: Path) -> None:
        """The card drawn, cropped to itself, as a PNG."""
        await self.render(card)
        await self.page.locator("#card").screenshot(path=path)


def require_renderer() -> None:
    """Skip (on a developer's machine) or fail (in CI) when a piece of the renderer is missing."""
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; CI must run the Adaptive Cards renderer tests")
        pytest.skip(missing)


@contextlib.asynccontextmanager
async def open_renderer() -> AsyncIterator[Renderer]:
    """The renderer's page in a fresh headless Chromium; it may load its own files only."""
    async with chromium() as browser:
        page = await browser.new_page(viewport={"width": 560, "height": 400})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        outside: list[str] = []

        async def only_files(route: Any) -> None:
            if route.request.url.startswith("file://"):
                await route.continue_()
            else:
                outside.append(route.request.url)
                await route.abort()

        await page.route("**/*", only_files)
        await page.goto(PAGE.as_uri())
        yield Renderer(page)
        assert not errors, f"the renderer's page threw: {errors}"
        assert not outside, f"the renderer's page reached out: {outside}"


@pytest.fixture
async def renderer() -> AsyncIterator[Renderer]:
    require_renderer()
    async with open_renderer() as opened:
        yield opened
