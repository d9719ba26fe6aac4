"""The question page pictures in docs/pictures/link/, drawn on a fixed clock.

The page writes its times (when the link expires, when it was answered) on
the server, so the pictures are drawn from the page served in this process
on the tests' fixed clock, as the console pictures are: redrawing them on
another day leaves them byte for byte the same. The browser test
(tests/e2e/test_link_page_browser.py) answers the same form on a real
``python -m bot``; this one only draws. Redraw with:

    BOT_WRITE_PICTURES=1 .venv/bin/python -m pytest tests/api/test_link_pictures.py
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.api.test_question_page import PageFactory, make_page
from tests.browser import picture_page
from tests.e2e.test_link_page_browser import VIEWPORTS, release_form, send_release_form

__all__ = ["make_page"]  # the fixture, shared with the page's own tests

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PICTURES = ROOT / "docs" / "pictures" / "link"
SHOTS = ROOT / "test-artifacts" / "browser"
WRITE = os.environ.get("BOT_WRITE_PICTURES") == "1"
ANSWERER = "link:release-ticket"


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
async def test_the_link_page_pictures_are_drawn_on_the_fixed_clock(
    make_page: PageFactory, browser: Browser, size: str
) -> None:
    """The form and its answered page, with times from the fixed clock, not today's."""
    served = await make_page()
    question = await served.ask(release_form(f"picture-{size}"))
    url = str(served.client.make_url(served.path(question, ANSWERER)))
    page = await picture_page(browser, url, at=served.clock(), viewport=VIEWPORTS[size])
    fixed_day = datetime.fromtimestamp(served.clock(), UTC).strftime("%Y-%m-%d")
    await expect(page.get_by_text(f"Expires {fixed_day}")).to_be_visible()
    await shoot(page, f"form-{size}.png")
    await send_release_form(page)
    await expect(page.get_by_text(f"Answered by {ANSWERER} at {fixed_day}")).to_be_visible()
    await shoot(page, f"answered-{size}.png")
    await page.context.close()


async def shoot(page: Page, name: str) -> None:
    await page.screenshot(path=SHOTS / f"link-picture-{name}", full_page=True)
    if WRITE:
        PICTURES.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=PICTURES / name, full_page=True)
