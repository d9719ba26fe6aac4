"""The email's picture in docs/pictures/email/: its HTML part, drawn by Debian's Chromium.

The sidecar beside the PNG is the HTML part exactly as the renderer writes it
for the fixed question below; the test fails when the code would write
another, and ``BOT_WRITE_PICTURES=1`` writes the sidecar and draws the PNG again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.email._message import Choice, Mailed, answers_of, question_message
from bot.contract.payloads import payload_of
from tests.browser import chromium

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "docs" / "pictures" / "email"
WRITE = os.environ.get("BOT_WRITE_PICTURES") == "1"
REDRAW = (
    "BOT_WRITE_PICTURES=1 .venv/bin/python -m pytest tests/adapters/email/test_email_pictures.py"
)

PAYLOAD = {
    "action": "deploy",
    "summary": "Deploy web 1.5 to production (the payments page goes with it).",
    "arguments": {"service": "web", "version": "1.5", "region": "eu-west-1"},
    "risk": "high",
}


def _html() -> str:
    mailed = Mailed(
        interrupt_id="int_picture",
        name="approval",
        payload=payload_of("approval", PAYLOAD),
        expires_at=1_768_550_400.0,
        asked_by="api:release-bot",
        recipient="ana@example.com",
        choices=[
            Choice(label, f"https://bridge.example.com/q/link-for-{preselect}")
            for label, preselect in answers_of(payload_of("approval", PAYLOAD))
        ],
        tally="1 of 2 approved: @bo@example.com",
        sent_at=1_768_464_000.0,
    )
    part = question_message(mailed, sender="bridge@example.com").get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


@pytest.mark.browser
async def test_the_email_picture_is_what_the_renderer_writes() -> None:
    """The sidecar is today's HTML part; the PNG is drawn from it (at 600 px, a mail pane)."""
    html = _html()
    sidecar = FOLDER / "approval.html"
    if WRITE:
        FOLDER.mkdir(parents=True, exist_ok=True)
        sidecar.write_text(html, encoding="utf-8")
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 640, "height": 520})
            await page.set_content(html)
            await page.screenshot(path=str(FOLDER / "approval.png"), full_page=True)
    assert sidecar.read_text(encoding="utf-8") == html, f"redraw with: {REDRAW}"
    assert (FOLDER / "approval.png").stat().st_size > 0
