"""TeamsSurface against the loopback connector: the posted message fits, edits find their card."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import pytest

from adapters.teams import TeamsSurface
from adapters.teams._connector import Connector
from bot.questions.quorum import MayAnswer, stored_tally
from bot.questions.records import RunRecord
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.surfaces import DeliveryError
from bot.testing import question
from tests.fakes.bf_connector import FakeConnector
from tests.support import closed_question, open_question

TEAMS_MESSAGE_LIMIT = 28 * 1024


@pytest.fixture
async def fake() -> AsyncIterator[FakeConnector]:
    connector = await FakeConnector().start()
    yield connector
    await connector.close()


@pytest.fixture
async def surface() -> AsyncIterator[TeamsSurface]:
    async def no_token() -> str | None:
        return None

    connector = Connector(token=no_token)
    yield TeamsSurface(connector, schema_of=lambda _name: None, attempts=1)
    await connector.close()


def _run(service_url: str) -> RunRecord:
    reference = {
        "serviceUrl": service_url,
        "conversation": {"id": "a:1chat"},
        "user": {"id": "29:a", "name": "Ana"},
    }
    return RunRecord(
        run_id="run_1",
        scope="t/a:1chat",
        surface="teams",
        requester="teams:t:aad-ana",
        text="go",
        created_at=0.0,
        conversation={"key": "a:1chat", "reference": reference},
    )


async def test_a_huge_question_posts_within_teams_message_limit(
    fake: FakeConnector, surface: TeamsSurface
) -> None:
    """10,000 characters and 60 options: the whole posted activity stays under 28 KB."""
    options = [f"choice {i:02d} " + "y" * 60 for i in range(60)]
    payload = {"questions": [question("Q" * 10_000, *options)]}
    interrupt = open_question("ask_user", payload)
    ref = await surface.publish_question(
        _run(fake.url), interrupt, token="h." + "t" * 900 + ".s", may=MayAnswer(anyone=True)
    )
    assert ref == {"service_url": fake.url, "conversation_id": "a:1chat", "activity_id": "1"}
    (call,) = fake.posted()
    assert len(json.dumps(call.body).encode()) < TEAMS_MESSAGE_LIMIT


def test_a_cards_answerers_are_named_as_the_bot_saw_them_else_by_a_short_id(
    surface: TeamsSurface,
) -> None:
    """Ana, whose message the conversation came from, by her name; a voter by the name their
    vote gave; anyone else by the start of their object id, never by tenant and object GUIDs."""
    guid = "3f2a9c1e-5a6b-4c8d-9e0f-123456789abc"
    run = _run("http://connector.invalid")
    reference = {
        **run.conversation["reference"],
        "user": {"id": "29:a", "name": "Ana", "aadObjectId": "aad-ana"},
    }
    run = dataclasses.replace(run, conversation={**run.conversation, "reference": reference})
    voter = "teams:t:aad-cy"
    asked = dataclasses.replace(
        open_question("approval", {"action": "deploy", "summary": "ship"}),
        answerers=("teams:t:aad-ana", f"teams:t:{guid}", voter),
        tally=stored_tally({"approve": [voter], "reject": [], "names": {voter: "Cy"}}),
    )
    may = RequesterOrApprovers().who_may_answer(asked, run.requester)
    context = surface.card_context(run, asked, token="tok", may=may)
    assert context.who_may_answer == ("Only Teams user 3f2a9c1e… or Ana or Cy can answer this.")


async def test_show_closed_edits_the_posted_card_and_a_401_is_permanent(
    fake: FakeConnector, surface: TeamsSurface
) -> None:
    """The edit goes to the message reference; a refused edit says what to fix."""
    activity_id = await surface.connector.send(fake.url, "a:1chat", {"type": "message"})
    expired = closed_question("approval", {"action": "deploy", "summary": "ship"}, "expired")
    where = {"service_url": fake.url, "conversation_id": "a:1chat", "activity_id": activity_id}
    record = dataclasses.replace(expired, message_ref=where)
    await surface.show_closed(_run(fake.url), record)
    (edit,) = fake.updates(activity_id)
    assert "Expired at" in json.dumps(edit.body)
    fake.fail_next(401)
    with pytest.raises(DeliveryError) as raised:
        await surface.show_closed(_run(fake.url), record)
    assert raised.value.permanent and "MicrosoftAppId" in raised.value.reason
