"""A real `python -m bot` process answering Slack: signed requests in, a loopback Web API out."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from tests import waiting
from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, BOB, CHANNEL, SlackDriver, slack_bot, text_of
from tests.e2e._slack_agents import NOTE, REGIONS
from tests.fakes.slack_api import FakeSlack, buttons, mention

pytestmark = pytest.mark.e2e

DEPLOYED = "Deployed web 1.5.0 to staging"


async def driver(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession, **env: str
) -> SlackDriver:
    return SlackDriver(http, await slack_bot(start_bot, fake, **env), fake)


async def test_mention_to_final_reply_with_buttons_replaced(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Mention -> buttons -> click -> approval -> approve -> final reply; each message edited."""
    slack = await driver(start_bot, fake, http)
    assert await slack.event(mention("deploy web", user=ALICE, ts="1.000100")) == 200
    ask = await slack.question()
    assert [b["text"]["text"] for b in buttons(ask.args)] == ["staging", "production"]
    assert ask.args["thread_ts"] == "1.000100"
    assert f"<@{ALICE}>" in text_of(ask) and "<!date^" in text_of(ask)

    status, body = await slack.click(ask, "staging")
    assert status == 200, body
    edited = (await slack.edits_of(ask))[0]
    assert not buttons(edited.args)
    assert f"Answered by <@{ALICE}>" in text_of(edited) and "staging" in text_of(edited)

    approval = await slack.question(2)
    styles = {b["text"]["text"]: b.get("style") for b in buttons(approval.args)}
    assert styles == {"Approve": "primary", "Reject…": "danger"}
    status, _ = await slack.click(approval, "Approve")
    assert status == 200
    approved = (await slack.edits_of(approval))[0]
    assert f"Approved by <@{ALICE}>" in text_of(approved) and not buttons(approved.args)

    final = await slack.reply(DEPLOYED)
    assert final.args["thread_ts"] == "1.000100" and final.args["channel"] == CHANNEL


async def test_double_click_spends_once_and_tells_the_second(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Two clicks on the same button: one answer, one ephemeral 'already answered'."""
    slack = await driver(start_bot, fake, http)
    await slack.event(mention("deploy web", user=ALICE))
    ask = await slack.question()
    results = await asyncio.gather(slack.click(ask, "staging"), slack.click(ask, "production"))
    assert [status for status, _ in results] == [200, 200]
    told = (await slack.ephemeral(ALICE))[0]
    assert "already answered by" in told.args["text"]
    await slack.question(2)  # the run went on, once
    assert len(await slack.edits_of(ask)) == 1


def _tampered(value: str) -> str:
    """A button's value with its token's claims altered: the signature no longer holds."""
    real = json.loads(value)
    header, claims, signature = real["t"].split(".")
    return json.dumps({"t": f"{header}.{claims}x.{signature}", "a": real["a"]})


@pytest.mark.parametrize("refused", ["stranger", "tampered"])
async def test_a_refused_click_is_told_and_the_token_stays_good(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession, refused: str
) -> None:
    """Bob clicks Alice's question ('only @alice'), or a value whose token was altered is
    sent ('not valid'): an ephemeral refusal, nothing spent; Alice's real click then works."""
    slack = await driver(start_bot, fake, http)
    await slack.event(mention("deploy web", user=ALICE))
    ask = await slack.question()
    if refused == "stranger":
        status, _ = await slack.click(ask, "production", user=BOB)
        told = (await slack.ephemeral(BOB))[0]
        assert told.args["text"] == f"Only <@{ALICE}> can answer this."
    else:
        value = _tampered(buttons(ask.args)[0]["value"])
        status, _ = await slack.click(ask, "staging", value=value)
        told = (await slack.ephemeral(ALICE))[0]
        assert "not valid" in told.args["text"]
    assert status == 200
    assert told.args["channel"] == CHANNEL
    assert not fake.of("chat.update")
    status, _ = await slack.click(ask, "staging")
    assert status == 200
    assert "staging" in text_of((await slack.edits_of(ask))[0])


async def test_a_retried_event_starts_nothing_twice(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """The same event_id delivered again (X-Slack-Retry-Num) posts one question, not two."""
    slack = await driver(start_bot, fake, http)
    event = mention("deploy web", user=ALICE, ts="5.000100")
    assert await slack.event(event, event_id="EvSAME") == 200
    await slack.question()
    assert await slack.event(event, event_id="EvSAME", retry=1) == 200
    assert await slack.event(event, event_id="EvSAME", retry=2) == 200
    # A fresh event after the retries: once its question is out, the retries had their turn.
    await slack.event(mention("deploy api", user=ALICE, ts="6.000100"))
    second = await slack.question(2)
    assert "api" in text_of(second)
    questions = [c for c in fake.of("chat.postMessage") if buttons(c.args)]
    assert [c.args["thread_ts"] for c in questions] == ["5.000100", "6.000100"]


async def test_a_rate_limited_post_is_delivered_after_retry_after(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """429 ratelimited with Retry-After on chat.postMessage: the question still arrives."""
    fake.fail("chat.postMessage", "ratelimited", status=429, retry_after=1)
    slack = await driver(start_bot, fake, http)
    await slack.event(mention("deploy web", user=ALICE))
    ask = await slack.question()
    posts = fake.of("chat.postMessage")
    assert len(posts) == 2 and posts[0].args == posts[1].args
    assert ask is posts[1]
    assert "chat.postMessage: ratelimited); retrying in 1 s" in slack.bot.log_text()


async def test_expiry_edits_the_message(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """An unanswered question expires: its buttons give way to 'Expired, no answer'."""
    slack = await driver(start_bot, fake, http, BOT_TTL_SECONDS="1", BOT_SWEEP_SECONDS="0.2")
    await slack.event(mention("deploy web", user=ALICE))
    ask = await slack.question()
    edited = (await slack.edits_of(ask))[0]
    assert "Expired, no answer." in text_of(edited) and not buttons(edited.args)
    await slack.reply("No decision arrived")


async def test_the_modal_shows_a_validation_error_then_takes_a_good_answer(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Answer… opens a modal; an empty answer comes back under its field; a good one resumes."""
    slack = await driver(start_bot, fake, http, BOT_AGENT="tests.e2e._slack_agents:free_text")
    await slack.event(mention("release", user=ALICE))
    ask = await slack.question()
    assert [b["text"]["text"] for b in buttons(ask.args)] == ["Answer…"]
    status, _ = await slack.click(ask, "Answer…")
    assert status == 200
    view = (await fake.wait_for("views.open"))[0].args["view"]
    assert [b["block_id"] for b in view["blocks"]] == ["q0", "q1"]
    assert view["blocks"][1]["element"]["type"] == "checkboxes"

    empty = {
        "q0": {"answer": {"type": "plain_text_input", "value": ""}},
        "q1": {"answer": {"type": "checkboxes", "selected_options": []}},
    }
    status, body = await slack.submit(view, empty)
    assert status == 200
    refused = json.loads(body)
    assert refused["response_action"] == "errors"
    assert "needs an answer" in refused["errors"]["q0"]
    assert not fake.of("chat.update")

    good = {
        "q0": {"answer": {"type": "plain_text_input", "value": "Faster deploys"}},
        "q1": {"answer": {"type": "checkboxes", "selected_options": [{"value": "eu"}]}},
    }
    status, body = await slack.submit(view, good)
    assert status == 200 and body == ""
    final = await slack.reply("Noted.")
    assert "Faster deploys" in final.args["text"] and NOTE in final.args["text"]
    assert REGIONS in final.args["text"]
    assert not buttons((await slack.edits_of(ask))[0].args)


async def test_an_approval_rejected_with_a_comment(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Reject (confirmed) opens a comment modal; the run hears the comment and stops."""
    slack = await driver(start_bot, fake, http)
    approval = await slack.approval()
    reject = next(b for b in buttons(approval.args) if b["text"]["text"] == "Reject…")
    assert reject["confirm"]["confirm"]["text"] == "Reject"
    status, _ = await slack.click(approval, "Reject…")
    assert status == 200
    view = (await fake.wait_for("views.open"))[0].args["view"]
    comment = {"comment": {"answer": {"type": "plain_text_input", "value": "not on a Friday"}}}
    status, body = await slack.submit(view, comment)
    assert status == 200 and body == ""
    edited = (await slack.edits_of(approval))[0]
    assert f"Rejected by <@{ALICE}>" in text_of(edited) and "not on a Friday" in text_of(edited)
    await slack.reply("Rejected (not on a Friday); I did not deploy web.")


async def test_bad_requests_get_401_or_400_and_no_traceback(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Wrong signature and stale timestamp: 401. Signed garbage: 400. No trace ever."""
    slack = await driver(start_bot, fake, http)
    url = f"{slack.bot.url}/slack/events"
    body = json.dumps({"type": "event_callback"})
    from tests.fakes.slack_api import sign

    cases = {
        "wrong secret": sign(body, secret="not-the-secret"),
        "stale": sign(body, timestamp=1_600_000_000),
        "unsigned": {},
    }
    for name, headers in cases.items():
        async with http.post(url, data=body, headers=headers) as response:
            text = await response.text()
            assert response.status == 401, (name, text)
            assert "Traceback" not in text
    garbage = "payload=%7Bnot-json"
    status, text = await slack.post(garbage, content_type="application/x-www-form-urlencoded")
    assert status == 400 and "Traceback" not in text and "not a Slack payload" in text
    status, text = await slack.post("{nope", content_type="application/json")
    assert status == 400 and "Traceback" not in text
    # Slack's own handshake when the Request URL is saved still works, signed.
    challenge = json.dumps({"type": "url_verification", "token": "t", "challenge": "c-123"})
    status, text = await slack.post(challenge, content_type="application/json")
    assert status == 200 and "c-123" in text


async def test_the_slash_command_answers(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """/hitl is routed and answers at once, to the caller only; a non-admin is refused."""
    slack = await driver(start_bot, fake, http)
    form = "command=%2Fhitl&text=list&user_id=U0ALICE&team_id=T0TEST&channel_id=C0CHAN"
    status, text = await slack.post(form, content_type="application/x-www-form-urlencoded")
    assert status == 200 and "Only admins can use that command" in text
    assert json.loads(text)["response_type"] == "ephemeral"


async def test_a_permanent_error_is_logged_once_with_the_fix(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """invalid_auth on every post: the log says what to fix, once, not once per message."""
    fake.fail("chat.postMessage", "invalid_auth", times=10)
    slack = await driver(start_bot, fake, http)
    await slack.event(mention("deploy web", user=ALICE, ts="7.0001"))
    await slack.event(mention("deploy api", user=ALICE, ts="8.0001"))
    await fake.wait_for("chat.postMessage", 2)
    await slack.bot.wait_ready()
    lines = [json.loads(line) for line in slack.bot.log_text().splitlines() if line.startswith("{")]

    def fixes() -> list[dict[str, object]]:
        return [
            entry
            for entry in lines
            if entry.get("logger") == "adapters.slack._errors"
            and entry.get("level") == "error"
            and "invalid_auth" in str(entry.get("message"))
        ]

    def logged() -> list[dict[str, object]]:
        lines[:] = [
            json.loads(line) for line in slack.bot.log_text().splitlines() if line.startswith("{")
        ]
        return fixes()

    await waiting.eventually(logged, what="the invalid_auth error logged", seconds=5)
    assert len(fixes()) == 1
    assert "reinstall the app" in str(fixes()[0]["message"])


def message(
    text: str,
    *,
    user: str,
    ts: str,
    thread_ts: str | None = None,
    channel: str = CHANNEL,
    channel_type: str = "channel",
    **extra: str,
) -> dict[str, str]:
    event = {
        "type": "message",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "channel_type": channel_type,
        "team": "T0TEST",
        "event_ts": ts,
        **extra,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


async def test_thread_replies_continue_and_direct_messages_start_runs(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """A reply in our thread continues it; a DM starts a run; bots and strangers' threads don't."""
    slack = await driver(start_bot, fake, http)
    await slack.event(mention("status web", user=ALICE, ts="10.000100"))
    first = await slack.reply("web: staging")
    assert first.args["thread_ts"] == "10.000100"
    # The bot's own reply comes back as a message event: it must start nothing.
    await slack.event(
        message(
            "web: staging 1.4.2", user="UBOT", ts="10.000200", thread_ts="10.000100", bot_id="B0BOT"
        )
    )
    # A reply in a thread the bot never joined: nothing either.
    await slack.event(message("status worker", user=ALICE, ts="20.000200", thread_ts="20.000100"))
    await slack.event(message("status api", user=ALICE, ts="10.000300", thread_ts="10.000100"))
    follow_up = await slack.reply("api: staging")
    assert follow_up.args["thread_ts"] == "10.000100"

    await slack.event(
        message("status worker", user=ALICE, ts="30.000100", channel="D0DM", channel_type="im")
    )
    direct = await slack.reply("worker: staging")
    assert direct.args["channel"] == "D0DM" and direct.args["thread_ts"] == "30.000100"
    replies = [c for c in fake.of("chat.postMessage") if c.response]
    assert [c.args["thread_ts"] for c in replies] == ["10.000100", "10.000100", "30.000100"]


async def test_a_user_group_may_answer_and_its_membership_is_cached(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """BOT_ANSWERERS names a group: members answer, others (the requester too) are told who."""
    fake.group_members["S0ONCALL"] = [BOB]
    slack = await driver(start_bot, fake, http, BOT_ANSWERERS="ask_user=S0ONCALL")
    await slack.event(mention("deploy web", user=ALICE))
    ask = await slack.question()
    assert "Only <!subteam^S0ONCALL> can answer this." in text_of(ask)
    await slack.click(ask, "staging", user=ALICE)
    told = (await slack.ephemeral(ALICE))[0]
    assert told.args["text"] == "Only <!subteam^S0ONCALL> can answer this."
    status, _ = await slack.click(ask, "staging", user=BOB)
    assert status == 200
    assert f"Answered by <@{BOB}>" in text_of((await slack.edits_of(ask))[0])
    assert len(fake.of("usergroups.users.list")) == 1


async def test_sigterm_after_a_click_stops_cleanly(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """SIGTERM with Slack on: the resume in flight finishes, sessions close, exit code 0."""
    slack = await driver(start_bot, fake, http)
    await slack.approval()
    assert await slack.bot.terminate() == 0
    log = slack.bot.log_text()
    assert "stopped cleanly" in log
    assert "Unclosed" not in log and "Traceback" not in log


async def test_sigkill_right_after_a_burst_of_acks_loses_no_answer(
    start_bot: StartBot, fake: FakeSlack, http: aiohttp.ClientSession
) -> None:
    """Acked clicks whose resumes were still held (acks first) are resumed after a crash."""
    slack = await driver(start_bot, fake, http, BOT_LEASE_SECONDS="2", BOT_SWEEP_SECONDS="0.5")
    runs = 5
    for n in range(runs):
        await slack.event(mention("deploy web", user=ALICE, ts=f"{1_700_000_100 + n}.000100"))
    questions = [await slack.question(n + 1) for n in range(runs)]
    acks = await asyncio.gather(*(slack.click(q, "staging") for q in questions))
    assert [status for status, _ in acks] == [200] * runs
    slack.bot.kill()  # at once: the resumes these acks owe were held or under way
    await slack.bot.restart()
    await slack.question(2 * runs)  # every run asked its next question: none lost
    for question in questions:
        # At least once: an edit made just before the kill may be made again after it.
        edits = await slack.edits_of(question)
        assert f"<@{ALICE}>" in text_of(edits[0])
