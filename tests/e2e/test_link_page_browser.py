"""The question page (/q/...) in Debian's headless Chromium, at 390 px (a phone) and 1280 px.

A real ``python -m bot`` hands out the link over /v1; the browser opens it,
fills the form in and sends it, as a person would. Screenshots land in
test-artifacts/browser/. The pictures docs/pictures.md shows are drawn on a
fixed clock by tests/api/test_link_pictures.py: this process runs on today's.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e._api import Api, api_env
from tests.e2e._server import ROOT, StartBot

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SHOTS = ROOT / "test-artifacts" / "browser"
WAIT_MS = 15_000
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


def release_form(key: str) -> dict[str, Any]:
    return {
        "idempotency_key": key,
        "kind": "form",
        "payload": {
            "title": "Release details for web 1.5",
            "message": "Fill in how the release should roll out. <b>Tags</b> show as typed.",
            "schema": {
                "type": "object",
                "properties": {
                    "owner": {"type": "string", "title": "Owner", "format": "email"},
                    "replicas": {"type": "integer", "title": "Replicas", "minimum": 1},
                    "canary": {"type": "boolean", "title": "Start with a canary"},
                    "region": {
                        "type": "string",
                        "title": "Region",
                        "enum": ["eu", "us"],
                        "enumNames": ["Europe", "United States"],
                    },
                    "checks": {
                        "type": "array",
                        "title": "Checks",
                        "items": {"type": "string", "enum": ["smoke", "load"]},
                    },
                },
                "required": ["owner", "replicas", "region"],
            },
        },
        "route": {"surface": "link", "conversation": "releases"},
        "answerers": ["link:release-ticket"],
        "ttl_seconds": 3600,
    }


# What ``send_release_form`` answers, as /v1 holds it.
RELEASE_ANSWER = {
    "owner": "ana@example.org",
    "replicas": 3,
    "canary": True,
    "region": "us",
    "checks": ["smoke"],
}


async def send_release_form(page: Page) -> None:
    """Fill in every field of ``release_form``'s page and send it; the answer /v1 then holds
    is ``RELEASE_ANSWER``."""
    await page.get_by_label("Owner").fill("ana@example.org")
    await page.get_by_label("Replicas").fill("3")
    await page.get_by_label("Start with a canary").check()
    await page.get_by_label("Region").select_option(label="United States")
    await page.get_by_label("smoke").check()
    await page.get_by_role("button", name="Send answer").click()


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
async def test_a_form_question_is_answered_on_its_page(
    start_bot: StartBot, http: aiohttp.ClientSession, browser: Browser, size: str
) -> None:
    """Open the link, fill every field, send: the page says it was answered; /v1 has the answer."""
    server = await start_bot(**api_env("link:*"))
    api = Api(http, server.url)
    created = await api.created(release_form(f"browser-{size}"))
    link = created["links"]["release-ticket"]
    context = await browser.new_context(viewport=VIEWPORTS[size])  # type: ignore[arg-type]
    errors: list[str] = []
    page = await context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    await page.goto(link)
    await expect(page.get_by_role("heading")).to_have_text("Release details for web 1.5")
    await expect(page.get_by_text("<b>Tags</b> show as typed.")).to_be_visible()
    # Nothing wider than the screen: no sideways scrolling on a phone.
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORTS[size]["width"]
    await shoot(page, f"form-{size}.png")
    await send_release_form(page)
    await expect(page.get_by_text("Answered by link:release-ticket")).to_be_visible()
    await shoot(page, f"answered-{size}.png")
    _, answered = await api.get(created["id"])
    assert answered["status"] == "answered"
    assert answered["answer"] == RELEASE_ANSWER
    # The page loaded itself and nothing else: the link, and the redirect back to it.
    assert {url.split("?")[0] for url in requests} == {link}
    assert errors == []
    await context.close()


async def shoot(page: Any, name: str) -> None:
    await page.screenshot(path=SHOTS / f"link-{name}", full_page=True)
