"""The shell's admin output obeys nothing an agent wrote: controls read as code points."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.admin import results, text_of, title_of
from bot.admin._render import json_text
from bot.contract.payloads import Payload, payload_of
from bot.display import has_hidden
from bot.human.factory import ask_user_registration
from bot.interactions.approval import approval_registration, approval_tool
from bot.interactions.form import form_registration, form_tool
from bot.service.delivering.surfaces import Conversation
from bot.stores import open_stores
from tests.admin.test_admin_cli import admin_cli
from tests.asking_support import RLO, TROJAN_APPROVAL, TROJAN_QUESTION, asking_script
from tests.support import Harness, HarnessFactory, pending_item

# Clear the screen, set the window title, then a C1 CSI (U+009B) that some terminals obey.
ESCAPES = "\x1b[2J\x1b]0;owned\x07\x9b31m"


@asynccontextmanager
async def asking_on(
    harness: HarnessFactory, db_path: Path, *, with_form: bool
) -> AsyncIterator[Harness]:
    """The asking script with approvals (and forms ``with_form``), on the file the admin
    CLI reads; its stores are closed when the block ends."""
    tools, registrations = [approval_tool()], [ask_user_registration(), approval_registration()]
    if with_form:
        tools.append(form_tool())
        registrations.append(form_registration())
    stores = await open_stores(f"sqlite:///{db_path}")
    try:
        yield harness(stores, asking_script, tools=tools, registrations=registrations)
    finally:
        await stores.close()


async def test_pending_and_show_print_every_control_as_its_code_point(
    harness: HarnessFactory, db_path: Path
) -> None:
    """U+202E in a question, an option, an approval's arguments, a form title; ESC in a reason."""
    async with asking_on(harness, db_path, with_form=True) as h:
        for key in ("trojan ask", "trojan approve", "trojan form"):
            await h.start(key, where=Conversation(surface="test", scope="T1", key=key.split()[1]))
        ids = [asked.interrupt_id for _, asked in h.surface.questions]
        assert len(ids) == 3

        code, out = admin_cli(db_path, "pending")
        assert code == 0
        assert not has_hidden(out.replace("\n", "")), repr(out)
        assert "Deploy web to prod⟨U+202E⟩gnits?" in out
        assert "Roll out web⟨U+2067⟩ to ⟨U+202E⟩prod." in out  # the approval's summary
        assert "Sign⟨U+202E⟩ up" in out  # the form's title line
        shows = [admin_cli(db_path, "show", interrupt_id) for interrupt_id in ids]
        for code, out in shows:
            assert code == 0 and not has_hidden(out.replace("\n", "")), repr(out)
        assert "staging⟨U+202E⟩" in shows[0][1]  # the option's label, in the payload line
        assert '"target⟨U+202E⟩": "prod⟨U+202E⟩gnits"' in shows[1][1]
        assert "Your⟨U+202E⟩ name" in shows[2][1]

        code, out = admin_cli(db_path, "cancel", ids[0], f"because{ESCAPES}")
        assert code == 0
        code, out = admin_cli(db_path, "show", ids[0])
        assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
        assert "reason: because⟨U+001B⟩[2J⟨U+001B⟩]0;owned⟨U+0007⟩⟨U+009B⟩31m" in out


async def test_json_output_escapes_what_a_terminal_would_obey_and_keeps_the_data(
    harness: HarnessFactory, db_path: Path
) -> None:
    """``--json show``: no raw control on the screen, the exact payload for a script."""
    async with asking_on(harness, db_path, with_form=False) as h:
        await h.start("trojan approve")
        interrupt_id = h.surface.questions[-1][1].interrupt_id
        code, out = admin_cli(db_path, "--json", "show", interrupt_id)
        assert code == 0
        assert not has_hidden(out.strip()), repr(out)
        assert "\\u202e" in out
        assert json.loads(out)["record"]["payload"] == TROJAN_APPROVAL


def asking(question: str) -> Payload:
    return payload_of("ask_user", {"questions": [{"question": question}]})


def test_a_clipped_title_never_cuts_a_code_point_in_half() -> None:
    """Shown first, then clipped: the limit holds for what is read, and no marker is cut."""
    for pad in range(60, 82):
        title = title_of(asking("x" * pad + RLO * 4), "ask_user")
        assert len(title) <= 80 and not has_hidden(title)
        body = title.removesuffix("…")
        assert body.count("⟨") == body.count("⟩"), title
    assert title_of(asking(TROJAN_QUESTION), "ask_user") == "Deploy web to prod⟨U+202E⟩gnits?"


def test_a_pending_line_shows_a_requester_and_answerers_as_written() -> None:
    """Names come from requests too: an ESC in one reads as ⟨U+001B⟩."""
    asked = pending_item(
        1,
        scope="console",
        name="ask_user",
        payload={"questions": [{"question": "Go?"}]},
        requester=f"console:ana{ESCAPES}",
        may_answer=(f"bo{RLO}",),
        issued_at=0.0,
        expires_at=60.0,
    )
    page = results.PendingPage(at=1.0, items=(asked,), next_after=None)
    text = text_of(page)
    assert not has_hidden(text.replace("\n", ""))
    assert "asked by console:ana⟨U+001B⟩[2J" in text and "may answer: bo⟨U+202E⟩" in text
    assert dataclasses.asdict(page)["items"][0]["may_answer"] == (f"bo{RLO}",)
    assert json.loads(json_text(page))["items"][0]["may_answer"] == [f"bo{RLO}"]
