"""The JSON the page draws from: pure functions over runs and questions."""

from __future__ import annotations

import dataclasses

from adapters.console._views import (
    Viewer,
    asked_by_an_agent,
    conversations_json,
    question_json,
    viewer_for,
)
from bot.contract.answers import ApprovalDecision
from bot.contract.payloads import payload_of
from bot.questions.quorum import stored_tally
from bot.questions.records import (
    ConversationSummary,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.messages import answered_text, cancelled_text, expired_text
from bot.service.delivering.views import RunWithQuestions

OPEN = Question(
    interrupt_id="i1",
    run_id="r1",
    scope="console",
    name="deploy_window",
    tool_call_id="c1",
    checkpoint_id="k1",
    payload=payload_of("deploy_window", {"window": "tonight"}),
    issued_at=100.0,
    expires_at=200.0,
)
# OPEN's run, as a person on the console asked it.
RUN = RunRecord(
    run_id="r1",
    scope="console",
    surface="console",
    requester="console:ana",
    text="deploy web",
    created_at=1.0,
)


def closed(status: QuestionStatus, by: str = "Ana") -> Question:
    return dataclasses.replace(OPEN, status=status, closed_by=by, closed_at=150.0)


async def test_unknown_interaction_is_drawn_as_other() -> None:
    """An interaction the page has no form for gets kind "other" and keeps its payload."""
    shown = question_json(OPEN, "tok")
    assert (shown["kind"], shown["name"], shown["payload"]) == (
        "other",
        "deploy_window",
        {"window": "tonight"},
    )
    assert shown["token"] == "tok"
    assert shown["closed_text"] is None


async def test_closed_questions_carry_their_sentence_and_no_token() -> None:
    """Answered, expired and cancelled each read with the shared sentence; no token leaks."""
    cases = {
        QuestionStatus.ANSWERED: answered_text("Ana", 150.0),
        QuestionStatus.EXPIRED: expired_text(150.0),
        QuestionStatus.CANCELLED: cancelled_text("Ana", 150.0),
    }
    for status, sentence in cases.items():
        shown = question_json(closed(status), "stale-token")
        assert (shown["status"], shown["closed_text"], shown["token"]) == (
            status.value,
            sentence,
            None,
        )


async def test_an_expiry_that_rejects_by_policy_reads_as_a_rejection() -> None:
    """``on_expire: "reject"`` stores a rejection: the page says so, not "without an answer"."""
    rejected = dataclasses.replace(
        closed(QuestionStatus.EXPIRED),
        answer=ApprovalDecision(decision="reject", comment="expired"),
    )
    shown = question_json(rejected, "stale-token")
    assert shown["closed_text"] == (
        "Expired at 1970-01-01 00:02 UTC without an answer: rejected, as its policy says."
    )


async def test_who_may_answer_follows_the_policy() -> None:
    """The page's "who may answer" and "yours" come from the service's own policy."""
    ana, bo = Responder("console:ana", "ana"), Responder("console:bo", "bo")
    views = [RunWithQuestions(RUN, (OPEN,), {OPEN.interrupt_id: "t"})]
    plain = RequesterOrApprovers()
    assert Viewer(ana, plain).answerers(RUN, OPEN) == "Only ana can answer this."
    assert (await viewer_for(ana, plain, views)).may_answer(OPEN, RUN)
    assert not (await viewer_for(bo, plain, views)).may_answer(OPEN, RUN)
    approvers = RequesterOrApprovers(approvers=frozenset({"console:bo"}))
    assert Viewer(ana, approvers).answerers(RUN, OPEN) == "Only ana can answer this."
    assert (await viewer_for(bo, approvers, views)).may_answer(OPEN, RUN)
    anyone = RequesterOrApprovers(anyone=True)
    assert Viewer(bo, anyone).answerers(RUN, OPEN) == "Anyone here can answer this."


async def test_named_answerers_of_other_surfaces_show_by_name_or_a_short_id() -> None:
    """An API question's answerers: a console person by name, a voter by the name their vote
    gave, a Teams person never seen by the start of their object id, not by raw GUIDs."""
    guid = "3f2a9c1e-5a6b-4c8d-9e0f-123456789abc"
    asked = dataclasses.replace(
        OPEN,
        answerers=("console:ana", f"teams:t:{guid}", "teams:t:aad-cy"),
        tally=stored_tally(
            {"approve": ["teams:t:aad-cy"], "reject": [], "names": {"teams:t:aad-cy": "Cy"}}
        ),
    )
    viewer = Viewer(Responder("console:ana", "ana"), RequesterOrApprovers())
    assert viewer.answerers(RUN, asked) == (
        "Only ana or Teams user 3f2a9c1e… or Cy can answer this."
    )


async def test_a_conversation_an_agent_named_is_titled_by_that_name() -> None:
    """`console:agents` lists as "agents", as the docs say; others keep their first words."""
    summaries = [
        ConversationSummary("agents", "Deploy web 1.5 to prod", 10.0, 1),
        ConversationSummary("c-1", "deploy web", 5.0, 1),
    ]
    listed = conversations_json(summaries, {}, you="ana", sign_in=False, named={"agents"})
    assert [c["title"] for c in listed["conversations"]] == ["agents", "deploy web"]
    run = dataclasses.replace(
        RUN,
        requester="api:ci",
        text="Deploy web 1.5 to prod",
        updated_at=1.0,
        conversation={"key": "agents"},
        status=RunStatus.REMOTE,
    )
    assert asked_by_an_agent([RunWithQuestions(run)])
    person = dataclasses.replace(run, requester="console:ana", status=RunStatus.COMPLETED)
    assert not asked_by_an_agent([RunWithQuestions(person)])
