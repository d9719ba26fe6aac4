"""Admin commands as Teams messages to the real app, replies from a loopback connector."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.service.running.runs import RUN_SERVICE
from tests.e2e._teams import (
    ALICE,
    BOB,
    TENANT,
    TeamsBotApp,
    actions,
    card_of,
    elements,
    execute,
    message,
    read,
    texts,
)
from tests.fakes.bf_connector import MAX_MESSAGE_BYTES, Call, FakeConnector

pytestmark = pytest.mark.e2e

BOB_CHAT = "a:1personal-bob"
BOB_ID = f"teams:{TENANT}:{BOB['aadObjectId']}"


@pytest.fixture
async def bot(tmp_path: Path, teams_sdk: str) -> AsyncIterator[TeamsBotApp]:
    app = await TeamsBotApp(tmp_path / "bot", BOT_ADMINS=[BOB_ID]).start()
    yield app
    await app.close()


def facts(card: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for fact_set in elements(card, "FactSet"):
        found.update({read(f["title"]): read(f["value"]) for f in fact_set["facts"]})
    return found


async def command(
    bot: TeamsBotApp, connector: FakeConnector, text: str, *, who: dict[str, str] = BOB
) -> dict[str, Any]:
    """Send an admin command from a personal chat; the card the bot replied with."""
    chat = BOB_CHAT if who is BOB else "a:1personal-alice"
    before = len([c for c in connector.cards() if c.conversation == chat])
    status, _ = await bot.post(message(connector.url, text, who=who, conversation=chat))
    assert status == 201
    replies = await connector.wait_for(
        lambda: [c for c in connector.cards() if c.conversation == chat][before:],
        what=f"reply to {text!r}",
    )
    return card_of(replies[0].body)


async def question(bot: TeamsBotApp, connector: FakeConnector) -> tuple[Call, str]:
    before = len(connector.cards())
    status, _ = await bot.post(message(connector.url, "deploy web"))
    assert status == 201
    cards = await connector.wait_for(lambda: connector.cards()[before:], what="question card")
    data = actions(card_of(cards[0].body))[0]["data"]
    return cards[0], str(data["iid"])


async def test_a_non_admin_gets_admins_only_and_the_attempt_is_audited(
    bot: TeamsBotApp, connector: FakeConnector
) -> None:
    """Alice's "pending" is refused with the shared sentence; the refusal is on record."""
    await question(bot, connector)
    refused = await command(bot, connector, "pending", who=ALICE)
    assert texts(refused) == [
        "Only admins can use that command; ask an admin, or type `help` for yours."
    ]
    shown = await command(bot, connector, "help", who=ALICE)
    assert [t for t in texts(shown) if t.startswith("`")] == ["`help`\n\nthe commands you may use"]
    assert texts(shown)[1].startswith("Admin commands are for the bot's admins.")
    events = await bot.app[RUN_SERVICE].stores.audit.recent()
    refusals = [e for e in events if e.kind == "admin-refused"]
    assert [(e.actor, e.detail["command"]) for e in refusals] == [
        (f"teams:{TENANT}:{ALICE['aadObjectId']}", "pending")
    ]


async def test_every_command_from_a_personal_chat(
    bot: TeamsBotApp, connector: FakeConnector
) -> None:
    """pending, show, extend, resend (answered on the new card), stats, audit, history, help,
    cancel."""
    first, iid = await question(bot, connector)
    page = await command(bot, connector, "pending")
    assert facts(page)["Id"] == iid
    assert facts(page)["Asked by"] == f"teams:{TENANT}:{ALICE['aadObjectId']}"
    assert any(f"/l/message/a:1personal-alice/{first.activity_id}" in t for t in texts(page))

    shown = await command(bot, connector, f"show {iid}")
    assert facts(shown)["Status"] == "outstanding"
    assert any(t.startswith("#1 publish done") for t in texts(shown))

    extended = await command(bot, connector, f"hitl extend {iid} 2h")
    assert "now expires at" in texts(extended)[0]
    redrawn = await connector.wait_for(
        lambda: connector.updates(first.activity_id), what="card redrawn"
    )
    old_token = actions(card_of(first.body))[0]["data"]["token"]
    new_token = actions(card_of(redrawn[-1].body))[0]["data"]["token"]
    assert new_token != old_token  # the redrawn card carries the new expiry

    resent = await command(bot, connector, f"resend {iid}")
    assert texts(resent)[0].startswith(f"Posting {iid} again")
    again = await connector.wait_for(
        lambda: [c for c in connector.cards() if c.conversation == "a:1personal-alice"][1:],
        what="question posted again",
    )
    moved = await connector.wait_for(
        lambda: [u for u in connector.updates(first.activity_id) if "posted again" in str(u.body)],
        what="old card pointing to the new",
    )
    assert again[0].activity_id in str(moved[-1].body)
    assert "actions" not in card_of(moved[-1].body)
    on_new = actions(card_of(again[0].body))[0]
    status, reply = await bot.post(execute(connector.url, on_new["data"]))
    assert status == 200 and any(t.startswith("Answered by Alice") for t in texts(reply["value"]))
    # The old card's token (redrawn before the move) is the same single spend: already used.
    status, reply = await bot.post(execute(connector.url, {**on_new["data"], "token": new_token}))
    assert status == 200
    assert any("already answered by Alice" in t for t in texts(reply["value"]))

    stats = await command(bot, connector, "stats")
    assert facts(stats)["Answered"] == "1" and facts(stats)["Cancelled"] == "0"
    run_id = facts(shown)["Run"].split(" ")[0]
    audit = await command(bot, connector, f"audit {run_id}")
    lines = texts(audit)
    assert lines[0] == f"Run {run_id}"
    assert [k for k in ("extended", "resent", "answered") if any(f" {k} " in t for t in lines)] == [
        "extended",
        "resent",
        "answered",
    ]
    alice = f"teams:{TENANT}:{ALICE['aadObjectId']}"
    history = texts(await command(bot, connector, f"history status=answered by={alice}"))
    assert any(iid in t for t in history), history
    none = texts(await command(bot, connector, "hitl history status=expired"))
    assert "No closed questions match." in none, none
    listed = await command(bot, connector, "help")
    assert any(t.startswith("`cancel <question-id> [reason]`") for t in texts(listed))
    closed = await command(bot, connector, f"cancel {iid}")
    assert texts(closed) == [f"Question '{iid}' is answered, not open; nothing changed."]


async def test_a_cancel_racing_an_answer_has_one_winner_and_both_people_are_told(
    bot: TeamsBotApp, connector: FakeConnector
) -> None:
    """Bob's cancel and Alice's click land together; one wins, each hears the outcome."""
    first, iid = await question(bot, connector)
    click = actions(card_of(first.body))[0]["data"]
    (cancelled, (status, answered)) = await asyncio.gather(
        command(bot, connector, f"cancel {iid} wrong service"),
        bot.post(execute(connector.url, click)),
    )
    assert status == 200
    bob_heard = texts(cancelled)[0]
    alice_heard = texts(answered["value"])
    if bob_heard.startswith("Cancelled"):
        assert any("cancelled by Bob" in t for t in alice_heard), alice_heard
    else:
        assert bob_heard == f"Question '{iid}' is answered, not open; nothing changed."
        assert any(t.startswith("Answered by Alice") for t in alice_heard), alice_heard
    row = await bot.app[RUN_SERVICE].stores.ledger.get(iid)
    assert row is not None and row.status.value in ("cancelled", "answered")
    events = await bot.app[RUN_SERVICE].stores.audit.recent()
    closes = [
        e.kind for e in events if e.interrupt_id == iid and e.kind in ("answered", "cancelled")
    ]
    assert len(closes) == 1


async def test_a_card_teams_refuses_as_too_large_leaves_the_question_open_to_resend(
    bot: TeamsBotApp, connector: FakeConnector
) -> None:
    """Teams answers 413 MessageSizeTooBig: nothing is retried in vain, the question stays
    open with Teams' reason on record, and an admin's resend posts it once it fits."""
    connector.max_bytes = 1000  # as if the card had outgrown Teams' limit
    status, _ = await bot.post(message(connector.url, "deploy web"))
    assert status == 201
    await connector.wait_for(
        lambda: [c for c in connector.calls if c.status == 413], what="the refused card"
    )
    connector.max_bytes = MAX_MESSAGE_BYTES
    listed = await command(bot, connector, "pending")
    iid = facts(listed)["Id"]
    # The refusal is stored just after Teams answered: each show is a round trip later.
    for _ in range(50):
        shown = await command(bot, connector, f"show {iid}")
        if "failed" in " ".join(texts(shown)):
            break
    assert facts(shown)["Status"] == "outstanding"
    assert "MessageSizeTooBig" in facts(shown)["Delivery error"]
    await command(bot, connector, f"resend {iid}")
    posted = await connector.wait_for(
        lambda: [c for c in connector.cards() if c.conversation != BOB_CHAT],
        what="the question's card, posted again",
    )
    assert actions(card_of(posted[0].body))[0]["data"]["iid"] == iid
    assert len([c for c in connector.calls if c.status == 413]) == 1
