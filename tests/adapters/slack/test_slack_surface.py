"""SlackSurface against the loopback Web API: what it posts, and how it fails."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._surface import SlackSurface, audience, mention
from bot.contract.answers import ApprovalDecision, AskUserAnswers
from bot.contract.payloads import payload_of
from bot.questions.quorum import MayAnswer, stored_tally
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.service.delivering.surfaces import DeliveryError
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

RUN = RunRecord(
    "r1",
    "T1:C1",
    "slack",
    "slack:T1:U1",
    "deploy web",
    0.0,
    conversation={"reference": {"team": "T1", "channel": "C1", "thread_ts": "1.1"}},
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    slack = await FakeSlack().start()
    yield slack
    await slack.close()


@pytest.fixture
async def surface(fake: FakeSlack) -> AsyncIterator[SlackSurface]:
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=fake.api_url, session=session)

        async def client_for(team: str) -> AsyncWebClient:
            return client

        yield SlackSurface(client_for=client_for)


def closed(status: QuestionStatus, ref: dict[str, str] | None) -> Question:
    return Question(
        "i1",
        "r1",
        "T1:C1",
        "ask_user",
        "c1",
        "cp1",
        payload_of(
            "ask_user", {"questions": [{"question": "Where?", "options": [{"label": "eu"}]}]}
        ),
        0.0,
        60.0,
        status=status,
        closed_by="<@U2>",
        closed_at=1.8e9,
        answer=AskUserAnswers(answers={"Where?": "eu"}),
        message_ref=ref,
    )


async def test_a_closed_question_is_edited_in_place(fake: FakeSlack, surface: SlackSurface) -> None:
    await surface.show_closed(
        RUN, closed(QuestionStatus.ANSWERED, {"team": "T1", "channel": "C1", "ts": "9.9"})
    )
    update = fake.of("chat.update")[0]
    assert (update.args["channel"], update.args["ts"]) == ("C1", "9.9")
    assert "Answered by <@U2>" in str(update.args["blocks"])
    await surface.show_closed(RUN, closed(QuestionStatus.EXPIRED, None))
    assert len(fake.of("chat.update")) == 1  # never posted: nothing to edit


async def test_the_outcome_goes_to_the_thread(fake: FakeSlack, surface: SlackSurface) -> None:
    await surface.post_outcome(RUN, "Deployed.")
    posted = fake.of("chat.postMessage")[0]
    assert (posted.args["channel"], posted.args["thread_ts"], posted.args["text"]) == (
        "C1",
        "1.1",
        "Deployed.",
    )


async def test_a_long_retry_after_is_handed_back_not_slept(
    fake: FakeSlack, surface: SlackSurface
) -> None:
    """Retry-After beyond what a delivery may wait: DeliveryError(retry_after) at once."""
    fake.fail("chat.postMessage", "ratelimited", status=429, retry_after=120)
    with pytest.raises(DeliveryError) as raised:
        await surface.post_outcome(RUN, "Deployed.")
    assert raised.value.retry_after == 120.0 and not raised.value.permanent
    assert len(fake.of("chat.postMessage")) == 1


async def test_msg_too_long_is_permanent_and_not_retried(
    fake: FakeSlack, surface: SlackSurface
) -> None:
    fake.fail("chat.postMessage", "msg_too_long")
    with pytest.raises(DeliveryError) as raised:
        await surface.post_outcome(RUN, "x")
    assert raised.value.permanent and "msg_too_long" in raised.value.reason
    assert len(fake.of("chat.postMessage")) == 1


async def test_a_revoked_token_is_permanent(fake: FakeSlack, surface: SlackSurface) -> None:
    fake.valid_tokens.clear()
    with pytest.raises(DeliveryError) as raised:
        await surface.post_ephemeral("T1", "C1", "U1", "hello")
    assert raised.value.permanent and "invalid_auth" in raised.value.reason


def test_who_may_answer_is_spelled_as_slack_mentions() -> None:
    assert mention("slack:T1:U1") == "<@U1>" and mention("console:operator") == "console:operator"
    may = MayAnswer(requester="slack:T1:U1", people=("U7",), groups=("S9",))
    assert audience(may) == "Only <@U1> or <@U7> or <!subteam^S9> can answer this."
    assert audience(MayAnswer(anyone=True, requester="slack:T1:U1")) == (
        "Anyone here can answer this."
    )


def test_ids_that_are_not_slacks_are_shown_as_text_never_as_mentions() -> None:
    """Another surface's person, or an id a request named, cannot become a mention or a link."""
    may = MayAnswer(
        requester="slack:T1:U1",
        people=("<!channel>", "console:ana", "x|@everyone"),
        groups=("S9|@here",),
    )
    shown = audience(may)
    assert shown == (
        "Only <@U1> or &lt;!channel&gt; or ana or x|@everyone or S9|@here can answer this."
    )
    assert mention("teams:t:<https://evil.example|ok>") == "teams:t:&lt;https://evil.example|ok&gt;"


def test_a_teams_answerer_is_named_as_seen_else_by_a_short_id_never_by_guids() -> None:
    """A Teams person shows by the name a vote gave, else by the start of their object id."""
    guid = "3f2a9c1e-5a6b-4c8d-9e0f-123456789abc"
    seen = f"teams:72f988bf-86f1-41af-91ab-2d7cd011db47:{guid}"
    unseen = "teams:72f988bf-86f1-41af-91ab-2d7cd011db47:aad-bob"
    may = MayAnswer(people=(seen, unseen))
    assert audience(may, {seen: "Bo <Lind>"}) == (
        "Only Bo &lt;Lind&gt; or Teams user aad-bob can answer this."
    )
    assert audience(may) == ("Only Teams user 3f2a9c1e… or Teams user aad-bob can answer this.")


async def test_a_quorums_closing_edit_names_every_approver(
    fake: FakeSlack, surface: SlackSurface
) -> None:
    """Slack people as mentions, a Teams approver by the name Teams gave, in voting order."""
    ref = {"team": "T1", "channel": "C1", "ts": "9.9"}
    approvers = ["slack:T1:U2", "teams:t1:aad-dee", "slack:T1:U3"]
    record = dataclasses.replace(
        closed(QuestionStatus.ANSWERED, ref),
        name="approval",
        payload=payload_of("approval", {"action": "deploy", "summary": "ship it"}),
        answer=ApprovalDecision(decision="approve", comment="", approved_by=approvers),
        tally=stored_tally(
            {"approve": approvers, "reject": [], "names": {"teams:t1:aad-dee": "Dee <x>"}}
        ),
        closed_by="u2, Dee <x> and u3",
        closed_by_id="slack:T1:U3",
    )
    await surface.show_closed(RUN, record)
    text = json.dumps(fake.of("chat.update")[0].args["blocks"])
    assert "Approved by <@U2>, @Dee &lt;x&gt; and <@U3> at" in text
    assert fake.refused == []


async def test_the_runs_final_text_is_shown_as_typed(
    fake: FakeSlack, surface: SlackSurface
) -> None:
    """The model's reply keeps its *bold*, but mentions, links and hidden controls show as text."""
    await surface.post_outcome(RUN, "*Done* <!channel> <https://evil.example|ok> \u202eok")
    posted = fake.of("chat.postMessage")[0].args
    shown = posted["blocks"][0]["text"]["text"]
    assert shown == "*Done* &lt;!channel&gt; &lt;https://evil.example|ok&gt; ⟨U+202E⟩ok"
    assert posted["text"] == shown and fake.refused == []
