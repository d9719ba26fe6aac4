"""The quorum's tally on every surface's question message: Slack blocks, a Teams card."""

from __future__ import annotations

import json

from adapters.slack._render import question_message
from adapters.teams import CardContext, question_card
from bot.questions.quorum import stored_tally, tally_text
from tests.support import open_question

PAYLOAD = {"action": "deploy", "summary": "Deploy to production", "arguments": {}, "risk": "high"}
TALLY = stored_tally(
    {"approve": ["slack:T1:U1", "slack:T1:U2"], "reject": [], "names": {"slack:T1:U1": "ana"}}
)


def test_the_tally_text_names_each_voter_and_is_empty_without_a_quorum() -> None:
    assert tally_text(TALLY, 3) == "2 of 3 approved: @ana, @slack:T1:U2"
    assert tally_text(None, 2) == "0 of 2 approved"
    assert tally_text(TALLY, 1) == ""
    rejected = stored_tally({"approve": [], "reject": ["u9"], "names": {"u9": "bo"}})
    assert tally_text(rejected, 2) == "0 of 2 approved; rejected by @bo"
    mentioned = tally_text(TALLY, 3, lambda voter, _: f"<@{voter.rsplit(':', 1)[-1]}>")
    assert mentioned == "2 of 3 approved: <@U1>, <@U2>"


def test_slack_shows_the_tally_under_the_question() -> None:
    interrupt = open_question("approval", PAYLOAD, expires_at=1_800_000_000.0)
    message = question_message(
        interrupt,
        token="tok",
        requester="<@U1>",
        audience="Anyone.",
        tally="1 of 2 approved: <@U1>",
    )
    assert "1 of 2 approved: <@U1>" in json.dumps(message["blocks"])
    plain = question_message(interrupt, token="tok", requester="<@U1>", audience="Anyone.")
    assert "approved:" not in json.dumps(plain["blocks"])


def test_teams_shows_the_tally_on_the_card() -> None:
    question = open_question("approval", PAYLOAD, expires_at=1_800_000_000.0)

    def card(tally: str = "") -> str:
        context = CardContext(question, "tok", "Ana", "Anyone may answer.", tally=tally)
        return json.dumps(question_card(context))

    assert "1 of 2 approved: @bo" in card("1 of 2 approved: @bo")
    assert "approved:" not in card()
