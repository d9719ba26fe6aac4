"""Teams end to end: activities over HTTP to the real app, a loopback connector behind it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.service.answering.outcomes import Responder
from bot.service.running.runs import RUN_SERVICE
from tests.e2e._server import StartBot
from tests.e2e._teams import (
    BOB,
    CHANNEL,
    DEPLOY_REPORT,
    QUESTION,
    StartApp,
    TeamsBotApp,
    TeamsDriver,
    actions,
    card_of,
    execute,
    message,
    texts,
)
from tests.fakes.bf_connector import FakeConnector
from tests.support import TEAMS_SDKS

pytestmark = pytest.mark.e2e


def _data(action: dict[str, Any], **inputs: str) -> dict[str, Any]:
    """What Teams sends for a click: the action's data merged with the card's inputs."""
    return {**action["data"], **inputs}


async def test_message_card_execute_resumes_and_updates_the_card(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """Message -> card -> Action.Execute -> resumed; the card is edited; the run reports."""
    bot = await start_app()
    status, _ = await bot.post(message(connector.url, "deploy web"))
    assert status == 201

    first = await connector.wait_for(connector.cards, what="question card")
    card = card_of(first[0].body)
    assert card["version"] == "1.5"
    assert QUESTION in texts(card)
    staging = next(a for a in actions(card) if a["title"] == "staging")
    assert staging["type"] == "Action.Execute"
    assert staging["fallback"]["type"] == "Action.Submit"

    status, reply = await bot.post(execute(connector.url, _data(staging)))
    assert status == 200, reply
    assert reply["type"] == "application/vnd.microsoft.card.adaptive"
    assert any(t.startswith("Answered by Alice at ") for t in texts(reply["value"]))
    assert "actions" not in reply["value"]

    cards = await connector.wait_for(lambda: connector.cards()[1:], what="approval card")
    approval = card_of(cards[0].body)
    assert "Risk: LOW" in texts(approval)
    edited = await connector.wait_for(
        lambda: connector.updates(first[0].activity_id), what="question card edited"
    )
    assert any(t.startswith("Answered by Alice") for t in texts(card_of(edited[-1].body)))

    approve = next(a for a in actions(approval) if a["title"] == "Approve")
    status, reply = await bot.post(execute(connector.url, _data(approve, comment="")))
    assert status == 200, reply
    assert any(t.startswith("Approved by Alice at ") for t in texts(reply["value"]))
    final = await connector.wait_for(
        lambda: [t for t in connector.texts() if t.startswith("Deployed")], what="final reply"
    )
    assert final == [DEPLOY_REPORT]


async def test_a_bot_process_runs_the_whole_flow(
    start_bot: StartBot, http: aiohttp.ClientSession, connector: FakeConnector
) -> None:
    """`python -m bot` on this run's SDK: a message starts a run, its card is posted through
    the connector, Action.Execute answers it, the card is edited for everyone, the run resumes
    and reports."""
    teams = TeamsDriver(http, await start_bot(BOT_CONSOLE="false"), connector)
    await teams.say("deploy web")
    question = await teams.card()
    answered = await teams.click(question, "staging")
    assert any(t.startswith("Answered by Alice at ") for t in texts(answered))
    approval = await teams.card(2)
    assert any(t.startswith("Answered by Alice") for t in texts(await teams.closed(question)))
    approved = await teams.click(approval, "Approve")
    assert any(t.startswith("Approved by Alice at ") for t in texts(approved))
    assert any(t.startswith("Approved by Alice") for t in texts(await teams.closed(approval)))
    assert await teams.replies("Deployed") == [DEPLOY_REPORT]


async def _question(bot: TeamsBotApp, connector: FakeConnector, **where: Any) -> Any:
    status, _ = await bot.post(message(connector.url, "deploy web", **where))
    assert status == 201
    calls = await connector.wait_for(connector.cards, what="question card")
    return calls[0]


async def _staging(bot: TeamsBotApp, connector: FakeConnector) -> dict[str, Any]:
    """Alice asks for a deploy: the question card's first action, staging."""
    first = await _question(bot, connector)
    staging: dict[str, Any] = actions(card_of(first.body))[0]
    return staging


async def _answered_staging(
    bot: TeamsBotApp, connector: FakeConnector, staging: dict[str, Any]
) -> None:
    """Alice's own click on staging is taken."""
    _, reply = await bot.post(execute(connector.url, _data(staging)))
    assert any(t.startswith("Answered by Alice") for t in texts(reply["value"]))


async def _approval_action(
    bot: TeamsBotApp, connector: FakeConnector, title: str
) -> dict[str, Any]:
    """Alice picks staging: the action titled ``title`` on the approval card that follows."""
    staging = await _staging(bot, connector)
    status, _ = await bot.post(execute(connector.url, _data(staging)))
    assert status == 200
    calls = await connector.wait_for(lambda: connector.cards()[1:], what="approval card")
    return next(a for a in actions(card_of(calls[0].body)) if a["title"] == title)


async def test_invalid_answer_returns_the_card_with_the_error_beside_the_input(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """An answer outside the options comes back as the same card with the error; nothing spent."""
    bot = await start_app()
    staging = await _staging(bot, connector)

    status, reply = await bot.post(execute(connector.url, _data(staging, q0="7")))
    assert status == 200
    shown = texts(reply["value"])
    assert any("'7' is not one of ['staging', 'production']" in t for t in shown), shown
    assert [a["title"] for a in actions(reply["value"])] == ["staging", "production"]

    await _answered_staging(bot, connector, staging)


async def test_approval_rejected_with_a_comment(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """Reject with a comment: the card says so, and the run reports it did nothing."""
    bot = await start_app()
    reject = await _approval_action(bot, connector, "Reject")

    status, reply = await bot.post(execute(connector.url, _data(reject, comment="freeze week")))
    assert status == 200
    assert any(
        t.startswith("Rejected by Alice at ") and t.endswith(": freeze week")
        for t in texts(reply["value"])
    )
    final = await connector.wait_for(connector.texts, what="final reply")
    assert final == ["Rejected (freeze week); I did not deploy web."]


async def test_double_submit_answers_once(start_app: StartApp, connector: FakeConnector) -> None:
    """Two clicks on one card: one answer, one 'already answered by Alice' refusal."""
    bot = await start_app()
    staging = await _staging(bot, connector)

    replies = [await bot.post(execute(connector.url, _data(staging))) for _ in range(2)]
    shown = [texts(body["value"]) for _, body in replies]
    assert any(t.startswith("Answered by Alice") for t in shown[0])
    assert any("already answered by Alice at " in t for t in shown[1]), shown[1]
    await connector.wait_for(lambda: connector.cards()[1:], what="approval card")
    assert len(connector.cards()) == 2


def _flipped(token: str) -> str:
    """``token`` with one character of its payload changed: its signature no longer holds."""
    header, payload, signature = token.split(".")
    return f"{header}.{payload[:10]}{'A' if payload[10] != 'A' else 'B'}{payload[11:]}.{signature}"


@pytest.mark.parametrize(
    ("refused", "sentence"),
    [
        ("stranger", "This question is not yours to answer; ask the person who started the run."),
        (
            "tampered",
            "This answer link is not valid; answer from the latest message the bot posted.",
        ),
    ],
)
async def test_a_refused_submit_gets_its_sentence_and_spends_nothing(
    start_app: StartApp, connector: FakeConnector, refused: str, sentence: str
) -> None:
    """Bob cannot answer Alice's question, nor can a token with one character changed;
    Alice's own answer still goes through afterwards."""
    bot = await start_app()
    staging = await _staging(bot, connector)
    if refused == "stranger":
        submit = execute(connector.url, _data(staging), who=BOB)
    else:
        submit = execute(connector.url, _data(staging, token=_flipped(staging["data"]["token"])))
    status, reply = await bot.post(submit)
    assert status == 200
    assert texts(reply["value"]) == [sentence]
    await _answered_staging(bot, connector, staging)


async def test_channel_message_needs_a_mention_and_the_mention_is_stripped(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """Without an @mention nothing starts; with one, the card goes to the thread."""
    bot = await start_app()
    thread = f"{CHANNEL};messageid=1700000000001"
    status, _ = await bot.post(
        message(connector.url, "deploy web", conversation=thread, kind="channel")
    )
    assert status == 201
    status, _ = await bot.post(
        message(connector.url, "deploy web", conversation=thread, kind="channel", mention=True)
    )
    assert status == 201
    calls = await connector.wait_for(connector.cards, what="question card in the thread")
    assert calls[0].conversation == thread
    assert QUESTION in texts(card_of(calls[0].body))
    assert len(connector.cards()) == 1


async def test_a_redelivered_message_starts_one_run(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """The same activity id twice (a channel retry) posts one card."""
    bot = await start_app()
    activity = message(connector.url, "deploy web", activity_id="msg-retried")
    for _ in range(2):
        status, _ = await bot.post(activity)
        assert status == 201
    await connector.wait_for(connector.cards, what="question card")
    status, _ = await bot.post(message(connector.url, "status web"))
    await connector.wait_for(connector.texts, what="status reply")
    assert len(connector.cards()) == 1


async def test_throttled_post_is_delivered_after_retry_after(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """A 429 then a 503 on the question's post are retried, and the card arrives."""
    bot = await start_app()
    connector.fail_next(429, retry_after="1")
    connector.fail_next(503)
    await _question(bot, connector)
    assert [c.status for c in connector.calls if c.method == "POST"] == [429, 503, 200]


async def test_expiry_edits_the_card(start_app: StartApp, connector: FakeConnector) -> None:
    """An unanswered question expires: its card says so, and the run reports it."""
    bot = await start_app(BOT_TTL_SECONDS=1, BOT_SWEEP_SECONDS=0.2)
    first = await _question(bot, connector)
    edited = await connector.wait_for(
        lambda: connector.updates(first.activity_id), what="expired card", seconds=20
    )
    assert any(t.startswith("Expired at ") for t in texts(card_of(edited[-1].body)))
    assert "actions" not in card_of(edited[-1].body)
    final = await connector.wait_for(connector.texts, what="final reply")
    assert final == ["No decision arrived, so I did not deploy web: it expired unanswered."]


async def test_action_submit_fallback_answers_and_edits_the_card(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """Clients without Universal Actions send a message with the data; the card is edited."""
    bot = await start_app()
    first = await _question(bot, connector)
    fallback = actions(card_of(first.body))[0]["fallback"]
    submit = message(connector.url, "")
    submit["value"] = fallback["data"]
    submit["replyToId"] = first.activity_id
    status, _ = await bot.post(submit)
    assert status == 201
    edited = await connector.wait_for(
        lambda: connector.updates(first.activity_id), what="card edited"
    )
    assert any(t.startswith("Answered by Alice") for t in texts(card_of(edited[0].body)))


@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        (b"{not json", "application/json", 400),
        (b"[1, 2]", "application/json", 400),
        (b'{"type": ""}', "application/json", 400),
        (b'{"text": "no type"}', "application/json", 400),
        (b'{"type": "message"}', "text/plain", 415),
    ],
)
async def test_malformed_activity_is_refused_without_a_500(
    start_app: StartApp, connector: FakeConnector, raw: bytes, content_type: str, status: int
) -> None:
    """Garbage in gets a 4xx and a sentence, never a 500."""
    bot = await start_app()
    got, body = await bot.post(None, raw=raw, headers={"Content-Type": content_type})
    assert got == status, body
    assert isinstance(body, dict) and body["error"]


async def test_cancellation_edits_the_card(start_app: StartApp, connector: FakeConnector) -> None:
    """An admin's cancel closes the question; the card says who cancelled it."""
    bot = await start_app()
    first = await _question(bot, connector)
    interrupt_id = actions(card_of(first.body))[0]["data"]["iid"]
    service = bot.app[RUN_SERVICE]
    assert await service.cancel(interrupt_id, by=Responder("teams:t:aad-admin", "Root"))
    edited = await connector.wait_for(
        lambda: connector.updates(first.activity_id), what="cancelled card"
    )
    assert any(t.startswith("Cancelled by Root at ") for t in texts(card_of(edited[-1].body)))


async def test_another_replica_answers_and_posts_from_the_stored_reference(
    tmp_path: Path, connector: FakeConnector, teams_sdk: str
) -> None:
    """A question asked through one process is answered through another sharing the store,
    which runs on the other SDK (a move from one SDK to the other, mid-question)."""
    other = next(sdk for sdk in TEAMS_SDKS if sdk != teams_sdk)
    first_app = await TeamsBotApp(tmp_path / "shared").start()
    try:
        first = await _question(first_app, connector)
    finally:
        await first_app.close()
    staging = actions(card_of(first.body))[0]
    second_app = await TeamsBotApp(tmp_path / "shared", BOT_TEAMS_SDK=other).start()
    try:
        status, reply = await second_app.post(execute(connector.url, _data(staging)))
        assert status == 200
        assert any(t.startswith("Answered by Alice") for t in texts(reply["value"]))
        calls = await connector.wait_for(lambda: connector.cards()[1:], what="approval card")
        assert calls[0].conversation == first.conversation
        assert connector.updates(first.activity_id)
    finally:
        await second_app.close()


async def test_an_invalid_approval_comment_is_shown_beside_the_comment(
    start_app: StartApp, connector: FakeConnector
) -> None:
    """A 1,001-character comment: the approval card again, the error under the comment box."""
    bot = await start_app()
    approve = await _approval_action(bot, connector, "Approve")

    status, reply = await bot.post(execute(connector.url, _data(approve, comment="x" * 1001)))
    assert status == 200
    body = reply["value"]["body"]
    index = next(i for i, e in enumerate(body) if e.get("id") == "comment")
    assert body[index]["value"] == "x" * 1001
    assert "1000 characters" in body[index + 1]["text"]
    assert [a["title"] for a in actions(reply["value"])] == ["Approve", "Reject"]
