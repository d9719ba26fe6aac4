"""The console page in headless Chromium: no control acts on its text, no markup renders."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from bot.contract.answers import answer_json
from bot.display import has_hidden
from tests.adapters.console.console_support import Console, ConsoleFactory
from tests.asking_support import MARKUP, RLO, TROJAN_LABEL, TROJAN_QUESTION, asking_agent

pytestmark = pytest.mark.browser

WAIT_MS = 15_000


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    await context.close()
    assert not errors, f"the page threw: {errors}"


async def asked(make_console: ConsoleFactory, *texts: str) -> Console:
    console = await make_console(spec=asking_agent(), admin=True)
    for text in texts:
        assert (await console.send(text, cid=f"c-{text.split()[1]}")).status == 202
    return console


async def feed_text(page: Page, console: Console, cid: str) -> str:
    await page.goto(str(console.client.make_url(f"/#{cid}")))
    await expect(page.locator(".question")).to_have_count(1, timeout=WAIT_MS)
    text: str = await page.locator("body").evaluate("(body) => body.textContent")
    return text


async def answered_on_page(page: Page, console: Console, cid: str) -> tuple[Locator, Any]:
    """Once the page shows ``cid``'s one question answered: that question's element, and the
    answer the run stored."""
    closed = page.locator('.question[data-status="answered"]')
    await expect(closed).to_have_count(1, timeout=WAIT_MS)
    await console.service.wait_idle()
    (view,) = await console.service.history("console", cid)
    (question,) = view.questions
    return closed, answer_json(question.answer)


async def test_no_control_reaches_the_page_and_agent_markup_stays_text(
    make_console: ConsoleFactory, page: Page
) -> None:
    """A question, its options, an approval's arguments and a form, read back from the DOM."""
    console = await asked(make_console, "trojan ask", "trojan approve", "trojan form")
    for cid in ("c-ask", "c-approve", "c-form"):
        text = await feed_text(page, console, cid)
        assert not has_hidden(text.replace("\n", "")), (cid, text)
        assert "⟨U+202E⟩" in text
        # The agent's <a>, **bold** and [link](...) read as typed; the feed has no link.
        assert MARKUP in text, text
        assert await page.locator("#feed a, #feed strong:not(.decision strong)").count() == 0
    await page.goto(str(console.client.make_url("/admin")))
    await expect(page.locator("#pending tbody tr")).to_have_count(3, timeout=WAIT_MS)
    admin_text = await page.locator("#pending").evaluate("(table) => table.textContent")
    assert not has_hidden(admin_text) and "prod⟨U+202E⟩gnits" in admin_text, admin_text


async def test_an_option_whose_label_hides_a_control_is_answered_from_the_page(
    make_console: ConsoleFactory, page: Page
) -> None:
    """The button reads "staging⟨U+202E⟩"; clicking it answers with the label as asked."""
    console = await asked(make_console, "trojan ask")
    await feed_text(page, console, "c-ask")
    await page.get_by_role("button", name="staging⟨U+202E⟩", exact=True).click()
    closed, answer = await answered_on_page(page, console, "c-ask")
    await expect(closed.locator(".answer-summary")).to_have_text("→ staging⟨U+202E⟩")
    assert answer == {"answers": {TROJAN_QUESTION: TROJAN_LABEL}}


async def test_a_form_with_controls_in_its_names_is_answered_as_asked(
    make_console: ConsoleFactory, page: Page
) -> None:
    """Labels and enums read visibly; the answer carries the property names and values asked."""
    console = await asked(make_console, "trojan form")
    await feed_text(page, console, "c-form")
    await page.get_by_label("Your⟨U+202E⟩ name").fill("Ada")
    await page.get_by_label("Plan⟨U+202E⟩").select_option(label="free⟨U+202E⟩")
    await page.get_by_role("checkbox", name="eu⟨U+202E⟩").check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    closed, answer = await answered_on_page(page, console, "c-form")
    await expect(closed.locator(".form-answer")).to_contain_text("free⟨U+202E⟩")
    assert answer == {
        f"name{RLO}": "Ada",
        "plan": f"free{RLO}",
        "regions": [f"eu{RLO}"],
    }
