"""Approve with changes on a real `python -m bot` answering Teams (the loopback Bot Framework
connector, emulator mode): the approval card's inputs, sent as Teams sends an Action.Execute."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.e2e import _edits as edits
from tests.e2e._server import StartBot
from tests.e2e._teams import TeamsDriver, actions, card_of, elements, read, submitted, texts
from tests.fakes.bf_connector import Call, FakeConnector

pytestmark = pytest.mark.e2e

EDIT = "Approve with changes"


async def driver(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession, **env: str
) -> TeamsDriver:
    return TeamsDriver(http, await start_bot(**env), connector)


def inputs(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The card's text inputs by their label."""
    return {str(e["label"]): e for e in elements(card, "Input.Text")}


async def editable_approval(teams: TeamsDriver) -> Call:
    """The approval's card, with every way to answer and each argument prefilled."""
    approval = await teams.approval()
    card = card_of(approval.body)
    assert [a["title"] for a in actions(card)] == ["Approve", "Reject", EDIT, "Respond"]
    shown = inputs(card)
    assert shown["service"]["value"] == "web" and shown["environment"]["value"] == "staging"
    return approval


def environment_input(card: dict[str, Any]) -> str:
    return str(inputs(card)["environment"]["id"])


def beside(card: dict[str, Any], input_id: str) -> str:
    """The text drawn right under the input ``input_id`` (where a problem with it is shown)."""
    body: list[dict[str, Any]] = card["body"]
    index = next(i for i, e in enumerate(body) if e.get("id") == input_id)
    after = body[index + 1] if index + 1 < len(body) else {}
    return read(str(after.get("text", ""))) if after.get("type") == "TextBlock" else ""


def says(card: dict[str, Any], *parts: str) -> bool:
    return any(all(part in t for part in parts) for t in texts(card))


async def test_an_edit_deploys_the_edited_environment_once_and_the_card_says_what_changed(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """The environment typed over in its input: the deploy runs there, is reported once, and
    both the invoke's card and the posted card say what changed."""
    teams = await driver(start_bot, connector, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await editable_approval(teams)
    field = environment_input(card_of(approval.body))

    replaced = await teams.click(approval, EDIT, {field: "production"})
    assert says(replaced, "Approved by Alice with changes at ", f": {edits.CHANGES}"), texts(
        replaced
    )
    assert "actions" not in replaced
    assert says(await teams.closed(approval), "Approved by Alice with changes at ", edits.CHANGES)
    await teams.replies(edits.TO_PRODUCTION)
    # Settled: the run is complete once its report is posted; no second deploy follows.
    await teams.bot.terminate()
    assert len([t for t in connector.texts() if t.startswith("Deployed")]) == 1


async def test_an_edit_survives_a_sigkill_right_after_its_reply_and_deploys_once(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """Killed as soon as Teams has the edit's reply: the next start resumes the run with the
    edited arguments, and the deploy is reported once."""
    teams = await driver(
        start_bot,
        connector,
        http,
        BOT_ALLOW=edits.EVERY_WAY,
        BOT_LEASE_SECONDS="2",
        BOT_SWEEP_SECONDS="0.5",
    )
    approval = await editable_approval(teams)
    field = environment_input(card_of(approval.body))
    replaced = await teams.click(approval, EDIT, {field: "production"})
    assert says(replaced, "with changes", edits.CHANGES)
    teams.bot.kill()
    await teams.bot.restart()
    await teams.replies(edits.TO_PRODUCTION)
    await teams.bot.terminate()
    deploys = [t for t in connector.texts() if t.startswith("Deployed")]
    assert len(deploys) == 1 and deploys[0].startswith(edits.TO_PRODUCTION)


async def test_respond_is_read_by_the_model_and_nothing_deploys(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """Respond, with the message in its box: the agent quotes it and does not deploy."""
    teams = await driver(start_bot, connector, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await editable_approval(teams)

    replaced = await teams.click(approval, "Respond", {"message": edits.WAIT})
    assert says(replaced, "Answered instead of run by Alice at ", edits.WAIT), texts(replaced)
    assert await teams.replies(edits.RESPONDED) == [edits.RESPONDED]
    await teams.bot.terminate()
    assert not [t for t in connector.texts() if t.startswith("Deployed")]


async def test_an_emptied_required_argument_is_refused_beside_its_input_and_stays_open(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """The environment's input emptied (Teams then sends no value for it): the card comes
    back with the problem under that input and nothing is spent; a valid edit then runs."""
    teams = await driver(start_bot, connector, http, BOT_ALLOW=edits.EVERY_WAY)
    approval = await editable_approval(teams)
    field = environment_input(card_of(approval.body))

    again = await teams.click(approval, EDIT, {field: ""})
    assert "is required" in beside(again, field), again["body"]
    assert inputs(again)["environment"]["value"] == ""  # drawn again as the person left it
    assert [a["title"] for a in actions(again)] == ["Approve", "Reject", EDIT, "Respond"]
    assert not connector.updates(approval.activity_id)

    replaced = await teams.click(approval, EDIT, {field: "production"})
    assert says(replaced, "with changes", edits.CHANGES)
    await teams.replies(edits.TO_PRODUCTION)


async def test_a_decision_the_deployment_does_not_allow_is_refused(
    start_bot: StartBot, connector: FakeConnector, http: aiohttp.ClientSession
) -> None:
    """By default the card has no edit inputs, and an edit forged into Approve's data is
    refused; the question stays open and a plain approve still deploys staging."""
    teams = await driver(start_bot, connector, http)
    approval = await teams.approval()
    card = card_of(approval.body)
    assert [a["title"] for a in actions(card)] == ["Approve", "Reject"]
    assert list(inputs(card)) == ["Comment (optional)"]

    # The edit inputs a card that allows edits would draw: a0, a1, ... in the arguments' order.
    edited = {f"a{i}": value for i, value in enumerate(edits.FORGED_ARGUMENTS.values())}
    forged = {**submitted(card, "Approve"), "decision": "edit", **edited}
    again = await teams.invoke(approval, forged)
    assert any(edits.NOT_ALLOWED in t for t in texts(again)), texts(again)
    assert [a["title"] for a in actions(again)] == ["Approve", "Reject"]
    assert not connector.updates(approval.activity_id)

    replaced = await teams.click(approval, "Approve")
    assert says(replaced, "Approved by Alice at ")
    await teams.replies(edits.TO_STAGING)
