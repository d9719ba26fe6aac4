"""``admin history``: closed questions newest first, by every filter, paged by cursor."""

from __future__ import annotations

from bot.admin import AdminService, results
from bot.contract.answers import ApprovalDecision
from bot.contract.payloads import payload_of
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.service.answering.outcomes import Responder
from bot.stores import Closing, Stores
from tests.support import steps

SHELL = Responder("shell:ops", "ops", is_admin=True)


async def closed(stores: Stores, n: int, status: QuestionStatus, *, by: str, decision: str) -> None:
    run = RunRecord(
        run_id=f"run-{n}",
        scope="T1:C1",
        surface="slack" if n % 2 else "teams",
        requester="alice" if n < 3 else "bob",
        text="go",
        created_at=1.0,
        conversation={"key": f"k{n}"},
    )
    await steps(stores).start(run)
    question = Question(
        interrupt_id=f"q{n}",
        run_id=run.run_id,
        scope="T1:C1",
        name="approval",
        tool_call_id=f"c{n}",
        checkpoint_id=f"run-{n}:1",
        payload=payload_of("approval", {"action": f"deploy {n}"}),
        issued_at=1000.0,
        expires_at=4e9,
    )
    await steps(stores).issue(question)
    answered = status is QuestionStatus.ANSWERED
    answer = ApprovalDecision.model_validate({"decision": decision}) if answered else None
    # Closed a day apart: q0 on 1970-01-02, q1 on 1970-01-03, ...
    at = 86400.0 * (n + 1) + 60
    await steps(stores).spend(f"q{n}", Closing(status, by=by, at=at, answer=answer, by_id=by))


async def history(admin: AdminService, words: str) -> list[str]:
    page = await admin.handle(f"history {words}", who=SHELL)
    assert isinstance(page, results.HistoryPage), page
    return [item.question.interrupt_id for item in page.items]


async def test_history_lists_closed_questions_newest_first_by_each_filter(stores: Stores) -> None:
    """Each filter narrows the list; the open question is never in it; a cursor pages on."""
    decisions = ["approve", "reject", "approve", "approve", "reject"]
    for n, decision in enumerate(decisions):
        status = QuestionStatus.CANCELLED if n == 3 else QuestionStatus.ANSWERED
        await closed(
            stores, n, status, by="slack:T1:U9" if n == 1 else "slack:T1:U7", decision=decision
        )
    admin = AdminService(stores=stores, admins=["shell:ops"], max_ttl_seconds=3600.0)
    assert await history(admin, "") == ["q4", "q3", "q2", "q1", "q0"]
    assert await history(admin, "status=cancelled") == ["q3"]
    assert await history(admin, "decision=reject") == ["q4", "q1"]
    assert await history(admin, "by=slack:T1:U9") == ["q1"]
    assert await history(admin, "user=bob") == ["q4", "q3"]
    assert await history(admin, "surface=slack") == ["q3", "q1"]
    assert await history(admin, "since=1970-01-03 until=1970-01-04") == ["q2", "q1"]
    first = await admin.handle("history limit=2", who=SHELL)
    assert isinstance(first, results.HistoryPage) and first.next_after is not None
    assert await history(admin, f"after={first.next_after} limit=2") == ["q2", "q1"]
    refused = await admin.handle("history status=open", who=SHELL)
    assert refused == results.CommandInvalid("status is one of answered, expired, cancelled.")
