"""The console page in Debian's headless Chromium, at desktop (1280x800) and phone (390x844).

Screenshots land in test-artifacts/browser/ for a person to look at.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser, Locator, Page, Route, expect

from tests.e2e._api import Api, api_env, approval
from tests.e2e._client import DEPLOY_REPORT, NO_DECISION, ConsoleClient
from tests.e2e._server import ROOT, StartBot

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SHOTS = ROOT / "test-artifacts" / "browser"
WAIT_MS = 15_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
ANA_PASSWORD = "ana's long password"
BO_PASSWORD = "bo's long password!"


NewPage = Callable[..., Awaitable[Page]]


@pytest.fixture
async def new_page(browser: Browser) -> AsyncIterator[NewPage]:
    """``await new_page(viewport, credentials)``: a fresh page; uncaught page errors fail."""
    errors: list[str] = []

    async def make(viewport: dict[str, int] = DESKTOP, **context: Any) -> Page:
        opened = await (await browser.new_context(viewport=viewport, **context)).new_page()  # type: ignore[arg-type]
        opened.on("pageerror", lambda error: errors.append(str(error)))
        return opened

    yield make
    assert not errors, f"the page threw: {errors}"


@pytest.fixture
async def page(new_page: NewPage) -> Page:
    return await new_page(DESKTOP)


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


async def test_waiting_badge_and_first_load(
    start_bot: StartBot, new_page: NewPage, http: aiohttp.ClientSession
) -> None:
    """Two "deploy web" runs waiting: badges, told-apart titles, and the page opens one."""
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    await api.deploy_to_staging("done-1")
    for cid in ("wait-1", "wait-2"):
        await api.asked(cid)
    page = await new_page(DESKTOP)
    await page.goto(f"{server.url}/")

    links = page.locator("#conversations a")
    await expect(links).to_have_count(3, timeout=WAIT_MS)
    waiting = page.locator("#conversations a[data-waiting]")
    await expect(waiting).to_have_count(2)
    await expect(waiting.first.locator(".badge")).to_have_text("1")
    titles = await page.locator("#conversations .title").all_inner_texts()
    assert sorted(titles) == ["deploy web #1", "deploy web #2", "deploy web #3"], titles
    # Waiting conversations sort first; the finished one is last.
    assert await links.last.get_attribute("data-waiting") is None
    # The first load opened a conversation that waits on this operator.
    await expect(page.get_by_role("button", name="staging", exact=True)).to_be_visible(
        timeout=WAIT_MS
    )
    await expect(page.locator(".question .facts")).to_contain_text("Expires in ")
    await expect(page.locator(".option .description", has_text="customers see it")).to_be_visible()
    await expect(page.locator("#connection")).to_have_text("Live")
    await page.screenshot(path=SHOTS / "10-desktop-waiting-badge.png")


async def test_answer_from_the_phone_layout(
    start_bot: StartBot, new_page: NewPage, http: aiohttp.ClientSession
) -> None:
    """At 390 px the sidebar folds behind a menu; a question is answered and approved."""
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    await api.asked("phone")
    page = await new_page(PHONE, is_mobile=True, has_touch=True)
    await page.goto(f"{server.url}/")

    menu = page.locator("#menu")
    await expect(menu).to_have_text("Conversations (1 waiting)", timeout=WAIT_MS)
    await expect(page.locator("#sidebar")).to_be_hidden()
    staging = page.get_by_role("button", name="staging", exact=True)
    await expect(staging).to_be_visible(timeout=WAIT_MS)
    feed_box = await page.locator("#feed").bounding_box()
    assert feed_box is not None and feed_box["width"] >= 360, feed_box
    await page.screenshot(path=SHOTS / "20-phone-question.png")

    await menu.tap()
    await expect(page.locator("#sidebar")).to_be_visible()
    await expect(page.locator("#conversations .badge")).to_have_text("1")
    # Open, the menu button is the list's close control.
    await expect(menu).to_have_text("Close conversations")
    await expect(menu).to_have_attribute("aria-expanded", "true")
    await page.screenshot(path=SHOTS / "21-phone-sidebar-open.png")
    await menu.tap()
    await expect(page.locator("#sidebar")).to_be_hidden()
    await expect(menu).to_have_text("Conversations (1 waiting)")
    await menu.tap()
    await page.locator("#conversations a").first.tap()
    await expect(page.locator("#sidebar")).to_be_hidden()

    await staging.tap()
    approve = page.get_by_role("button", name="Approve", exact=True)
    await expect(approve).to_be_visible(timeout=WAIT_MS)
    await page.screenshot(path=SHOTS / "22-phone-approval.png")
    await approve.tap()
    await expect(page.locator(".bot-message", has_text=DEPLOY_REPORT)).to_be_visible(
        timeout=WAIT_MS
    )
    approved = page.locator(".question .decision-approve")
    await expect(approved).to_be_visible()
    answered_approval = page.locator('.question[data-status="answered"]').last
    await expect(answered_approval.locator(".risk")).to_have_text("low risk")
    await expect(answered_approval.locator(".arguments")).to_contain_text("staging")
    await expect(answered_approval.locator(".closed-text")).to_contain_text("Approved by ")
    await page.screenshot(path=SHOTS / "23-phone-answered.png", full_page=True)


async def test_connection_lost_state_clears_after_a_restart(
    start_bot: StartBot, new_page: NewPage
) -> None:
    """Killing the bot shows the connection as lost; after a restart it reads live again."""
    server = await start_bot()
    page = await new_page(DESKTOP)
    await page.goto(f"{server.url}/")
    status = page.locator("#connection")
    await expect(status).to_have_text("Live", timeout=WAIT_MS)
    await expect(page.locator("#offline")).to_be_hidden()
    message = page.get_by_label("Message", exact=True)
    await message.fill("deploy web")
    await message.press("Enter")
    await expect(page.get_by_role("button", name="staging", exact=True)).to_be_visible(
        timeout=WAIT_MS
    )

    server.kill()
    await expect(page.locator("#offline")).to_be_visible(timeout=WAIT_MS)
    await expect(status).to_have_attribute("data-state", "down")
    # Acting while the bot is down puts up a banner, which can be closed...
    await page.get_by_role("button", name="staging", exact=True).click()
    banner = page.locator("#banner")
    await expect(banner).to_contain_text("cannot reach the bot", timeout=WAIT_MS)
    await page.screenshot(path=SHOTS / "30-desktop-connection-lost.png")
    await page.get_by_role("button", name="Close").click()
    await expect(banner).to_be_hidden()
    await message.fill("status web")
    await message.press("Enter")
    await expect(banner).to_be_visible(timeout=WAIT_MS)

    # ...and clears by itself once the bot is back and the stream reconnects.
    await server.restart()
    await expect(status).to_have_text("Live", timeout=WAIT_MS)
    await expect(page.locator("#offline")).to_be_hidden()
    await expect(banner).to_be_hidden()
    await page.get_by_role("button", name="staging", exact=True).click()
    await expect(page.get_by_role("button", name="Approve", exact=True)).to_be_visible(
        timeout=WAIT_MS
    )
    await page.screenshot(path=SHOTS / "31-desktop-reconnected.png")


async def test_signed_in_name_is_who_answered(start_bot: StartBot, new_page: NewPage) -> None:
    """Signed in as ana: the page says so, and her answer reads "Answered by ana"."""
    server = await start_bot(BOT_CONSOLE_USERS=f"ana:{ANA_PASSWORD},bo:{BO_PASSWORD}")
    page = await new_page(DESKTOP, http_credentials={"username": "ana", "password": ANA_PASSWORD})
    await page.goto(f"{server.url}/")
    await expect(page.locator("#you")).to_have_text("Signed in as ana", timeout=WAIT_MS)
    message = page.get_by_label("Message", exact=True)
    await message.fill("deploy web")
    await message.press("Enter")
    staging = page.get_by_role("button", name="staging", exact=True)
    await expect(staging).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator(".question .facts")).to_contain_text("Asked by ana")
    await expect(page.locator(".question .facts")).to_contain_text("Only ana can answer this.")
    await staging.click()
    reject = page.get_by_role("button", name="Reject", exact=True)
    await expect(reject).to_be_visible(timeout=WAIT_MS)
    await reject.click()
    first = page.locator('.question[data-status="answered"]').first
    await expect(first.locator(".closed-text")).to_contain_text("Answered by ana", timeout=WAIT_MS)
    rejected = page.locator(".question .decision-reject")
    await expect(rejected).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator(".closed-text", has_text="Rejected by ana")).to_be_visible()
    await page.screenshot(path=SHOTS / "40-desktop-signed-in-answered-by.png", full_page=True)

    # Bo, signed in as himself, sees ana's finished run but nothing he could answer.
    bo = await new_page(PHONE, http_credentials={"username": "bo", "password": BO_PASSWORD})
    await bo.goto(f"{server.url}/")
    await expect(bo.locator("#you")).to_have_text("Signed in as bo", timeout=WAIT_MS)


async def test_a_refusal_banner_shows_local_times_and_closes(
    start_bot: StartBot, new_page: NewPage, http: aiohttp.ClientSession
) -> None:
    """Answering a question someone else just answered: the banner says so in local time."""
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    ask = await api.asked("race")
    page = await new_page(DESKTOP)
    # No live updates, so the page still shows the question after it is answered elsewhere.
    await page.route("**/api/events", lambda route: route.abort())
    await page.goto(f"{server.url}/#race")
    staging = page.get_by_role("button", name="staging", exact=True)
    await expect(staging).to_be_visible(timeout=WAIT_MS)
    await api.answer_ok(
        ask["token"], {"answers": {ask["payload"]["questions"][0]["question"]: "staging"}}
    )

    await staging.click()
    banner = page.locator("#banner")
    await expect(banner).to_contain_text("already answered by", timeout=WAIT_MS)
    await expect(banner.locator("time")).to_have_count(1)
    assert "UTC" not in await banner.inner_text()
    await page.screenshot(path=SHOTS / "50-desktop-refusal-banner.png")
    await page.get_by_role("button", name="Close").click()
    await expect(banner).to_be_hidden()


async def test_the_admin_panel_extends_and_cancels(
    start_bot: StartBot, page: Page, http: aiohttp.ClientSession
) -> None:
    """/admin lists the open question; Extend and Cancel (with a reason) go through bot.admin.

    No native dialog: Extend takes its duration from a list, Cancel its reason inline.
    """
    server = await start_bot()
    api = ConsoleClient(http, server.url)
    asked = await api.asked("adm")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))

    # The console links to the admin page.
    await page.goto(f"{server.url}/")
    await page.locator("#admin-link").click()
    await expect(page).to_have_url(f"{server.url}/admin")
    row = page.locator(f'#pending tr[data-id="{asked["interrupt_id"]}"]')
    await expect(row).to_have_count(1, timeout=WAIT_MS)
    await expect(row).to_contain_text("Which environment should I deploy web in?")
    # Expiry as the console writes it: relative, then local time.
    await expect(row.locator('td[data-label="Expires"]')).to_contain_text(
        re.compile(r"^in \d+ h \(")
    )
    await page.screenshot(path=SHOTS / "40-admin-pending.png")

    await row.get_by_label("Extend by").select_option("2h")
    await row.get_by_role("button", name="Extend").click()
    await expect(page.locator("#banner")).to_contain_text("now expires at", timeout=WAIT_MS)
    row = page.locator(f'#pending tr[data-id="{asked["interrupt_id"]}"]')
    await row.get_by_role("button", name="Cancel", exact=True).click()
    await row.get_by_label("Reason for cancelling").fill("wrong service")
    await row.get_by_role("button", name="Cancel question").click()
    await expect(page.locator("#banner")).to_contain_text("Cancelled", timeout=WAIT_MS)
    await expect(page.locator("#pending tbody tr")).to_have_count(0, timeout=WAIT_MS)
    await expect(page.locator("#stats")).to_contain_text("1 cancelled")
    # Nothing open: a sentence, not a bare table header.
    await expect(page.locator("#empty")).to_be_visible()
    await expect(page.locator("#pending")).to_be_hidden()
    assert dialogs == []
    feed = await api.feed("adm")
    (question,) = [q for run in feed["runs"] for q in run["questions"]]
    assert question["status"] == "cancelled"

    # The console page says why, as the admin wrote it.
    await page.goto(f"{server.url}/#adm")
    closed = page.locator('.question[data-status="cancelled"] .closed-text')
    await expect(closed).to_contain_text("Reason: wrong service", timeout=WAIT_MS)


async def test_the_admin_panel_fits_a_phone(
    start_bot: StartBot, new_page: NewPage, http: aiohttp.ClientSession
) -> None:
    """At 390x844 the page is no wider than the screen and every action button is on it."""
    server = await start_bot()
    page = await new_page(PHONE)
    await page.goto(f"{server.url}/admin")
    await expect(page.locator("#empty")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator("#empty")).to_contain_text("No open questions")
    await page.screenshot(path=SHOTS / "41-admin-phone-empty.png")

    api = ConsoleClient(http, server.url)
    await api.asked("phone-1")
    await api.asked("phone-2", "deploy api")
    await page.reload()
    rows = page.locator("#pending tbody tr")
    await expect(rows).to_have_count(2, timeout=WAIT_MS)
    await expect(page.locator("#empty")).to_be_hidden()
    await page.screenshot(path=SHOTS / "42-admin-phone.png", full_page=True)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide"
    controls = page.locator("#pending button, #pending select")
    assert await controls.count() == 2 * 4  # Cancel, the duration, Extend, Resend
    for index in range(await controls.count()):
        box = await controls.nth(index).bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (index, box)
    # The inline cancel form fits too.
    await rows.first.get_by_role("button", name="Cancel", exact=True).click()
    for name in ("Cancel question", "Keep it"):
        box = await rows.first.get_by_role("button", name=name).bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], (name, box)


async def test_a_form_is_filled_in_refused_then_answered(start_bot: StartBot, page: Page) -> None:
    """A form drawn from its schema: a wrong age gets the sentence, a right one the summary."""
    server = await start_bot(BOT_AGENT="tests.form_support:form_agent")
    await page.goto(f"{server.url}/")
    message = page.get_by_label("Message", exact=True)
    await message.fill("sign up")
    await message.press("Enter")

    name = page.get_by_label("Your name")
    await expect(name).to_be_visible(timeout=WAIT_MS)
    await expect(page.get_by_role("heading", name="Sign up")).to_be_visible()
    await name.fill("Ada")
    await page.get_by_label("Email").fill("ada@example.org")
    await page.get_by_role("spinbutton", name="Age").fill("200")
    await page.get_by_label("Agree to the terms").select_option("true")
    await page.get_by_label("plan").select_option("pro")
    await page.get_by_label("Start date").fill("2026-12-24")
    await page.get_by_role("checkbox", name="eu").check()
    await page.screenshot(path=SHOTS / "50-form.png", full_page=True)
    await page.get_by_role("button", name="Submit", exact=True).click()

    banner = page.locator("#banner-text")
    await expect(banner).to_contain_text("age: must be at most 150", timeout=WAIT_MS)
    beside = page.locator('.field[data-field="age"] .field-error')
    await expect(beside).to_have_text("must be at most 150")
    await page.get_by_role("spinbutton", name="Age").fill("36")
    await page.get_by_role("button", name="Submit", exact=True).click()

    answer = '{"age": 36, "agree": true, "email": "ada@example.org", "name": "Ada", "plan": "pro"'
    report = page.locator(".bot-message", has_text=answer)
    await expect(report).to_have_count(1, timeout=WAIT_MS)
    answered = page.locator('.question[data-status="answered"]')
    await expect(answered.locator(".form-answer")).to_contain_text("Ada")
    await expect(answered.locator(".form-answer")).to_contain_text("eu")
    await page.screenshot(path=SHOTS / "51-form-answered.png", full_page=True)


async def test_an_api_question_answered_in_the_page_shows_the_agent_was_told(
    start_bot: StartBot, page: Page, http: aiohttp.ClientSession
) -> None:
    """An agent asks in `agents`: the sidebar names it so, and once approved the page says
    the agent has been told (no "Working…", which no run of ours would end)."""
    server = await start_bot(**api_env("console:*"))
    api = Api(http, server.url)
    status, asked = await api.ask(
        approval("deploy-42", {"surface": "console", "conversation": "agents"})
    )
    assert status == 201, asked
    await page.goto(f"{server.url}/")

    # The conversation is listed by the name the agent's route (and docs/api.md) gives it.
    await expect(page.locator("#conversations .title")).to_have_text(["agents"], timeout=WAIT_MS)
    approve = page.get_by_role("button", name="Approve", exact=True)
    await expect(approve).to_be_visible(timeout=WAIT_MS)
    await page.screenshot(path=SHOTS / "50-api-question.png")
    await approve.click()

    told = page.locator(".bot-message.agent-told")
    await expect(told).to_have_text("The agent that asked (api:ci) has been told.", timeout=WAIT_MS)
    await expect(page.locator(".question .decision-approve")).to_be_visible()
    await expect(page.locator(".working")).to_have_count(0)
    await page.screenshot(path=SHOTS / "51-api-question-answered.png")
    answered = await api.get(asked["id"])
    assert answered[1]["status"] == "answered", answered

    # A new conversation beside the listed one points at the list rather than "Nothing here".
    await page.get_by_role("button", name="New conversation", exact=True).click()
    await expect(page.locator("#feed .empty")).to_have_text(
        "Nothing here yet. Pick a conversation under Conversations, "
        "or ask the bot something, e.g. deploy web.",
        timeout=WAIT_MS,
    )


async def test_a_slow_load_reads_as_loading_not_empty(start_bot: StartBot, page: Page) -> None:
    """While the first reads are held back, the feed and the list say "Loading…"."""
    server = await start_bot()
    held = asyncio.Event()

    async def hold(route: Route) -> None:
        await held.wait()
        await route.continue_()

    await page.route(re.compile(r".*/api/conversations.*"), hold)
    await page.goto(f"{server.url}/")
    await expect(page.locator("#feed .loading")).to_have_text("Loading…", timeout=WAIT_MS)
    await expect(page.locator("#feed")).to_have_attribute("aria-busy", "true")
    await expect(page.locator("#conversations .loading")).to_have_text("Loading…")
    await expect(page.locator("#feed .empty:not(.loading)")).to_have_count(0)
    held.set()
    await expect(page.locator(".loading")).to_have_count(0, timeout=WAIT_MS)
    await expect(page.locator("#feed .empty")).to_have_text(
        "Nothing here yet. Ask the bot something, e.g. deploy web."
    )


async def test_the_edit_panel_names_the_arguments_it_keeps_and_sends_only_its_own(
    start_bot: StartBot, page: Page, http: aiohttp.ClientSession
) -> None:
    """An approval whose schema lists env alone: the panel edits env, says command and
    dry_run are kept as asked, and the agent gets them with the edited env."""
    server = await start_bot(**api_env("console:*"))
    api = Api(http, server.url)
    arguments = {"service": "web", "env": "prod", "command": "deploy --all", "dry_run": True}
    schema = {"type": "object", "properties": {"env": {"type": "string"}}}
    body = approval("kept", {"surface": "console", "conversation": "agents"})
    body["payload"] |= {"arguments": arguments, "arguments_schema": schema}
    body["allow"] = ["approve", "reject", "edit"]
    status, asked = await api.ask(body)
    assert status == 201, asked
    await page.goto(f"{server.url}/#agents")
    edit = page.get_by_role("button", name="Edit…", exact=True)
    await expect(edit).to_be_visible(timeout=WAIT_MS)
    await edit.click()
    await expect(page.locator(".edit-kept")).to_have_text(
        "Kept as asked (not editable here): service, command, dry_run"
    )
    await page.get_by_label("env", exact=True).fill("staging")
    await page.screenshot(path=SHOTS / "52-edit-panel-kept-arguments.png")
    await page.get_by_role("button", name="Approve with changes", exact=True).click()
    status, answered = await api.get(asked["id"], wait=10)
    assert answered["status"] == "answered", answered
    assert answered["answer"]["arguments"] == {**arguments, "env": "staging"}
