"""What the page reads: runs, questions and conversations as plain JSON.

Pure functions with no I/O, like the Slack and Teams renderers; the page
decides how to draw them, these decide what it may know (a token only
while its question can still be answered) and how its text reads: every
string an agent, a model or a person wrote leaves through ``_shown``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.console._shown import page_kind, page_payload, shown
from adapters.console._surface import SURFACE
from bot.contract.answers import ApprovalDecision, answer_json, decision_of
from bot.contract.edits import diff_text
from bot.interactions.approval import APPROVAL
from bot.questions.quorum import tally_line, voter_names
from bot.questions.records import (
    ConversationSummary,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.messages import (
    answered_text,
    approval_line,
    closed_text,
    group_text,
    person_text,
    when,
    who_may_answer_text,
)
from bot.service.delivering.views import RunWithQuestions


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking, the policy that says what they may answer, and what it said.

    ``yours`` holds the ids of the open questions the policy let them answer,
    asked beforehand (``viewer_for``): the policy may look a group up, and
    these functions do no I/O.
    """

    who: Responder
    policy: RequesterOrApprovers
    yours: frozenset[str] = frozenset()

    def may_answer(self, record: Question, run: RunRecord | None) -> bool:
        del run
        return record.interrupt_id in self.yours

    def answerers(self, run: RunRecord, record: Question) -> str:
        """Who may answer ``record``, as the policy decides it: a console person by name,
        a voter by the name their vote gave, anyone else by a short form of their id."""
        seen = voter_names(record.tally)
        may = self.policy.who_may_answer(record, run.requester)
        names = [person_text(who, seen) for who in may.persons()]
        return who_may_answer_text(may, names + [group_text(g) for g in may.groups])


async def viewer_for(
    who: Responder, policy: RequesterOrApprovers, views: Sequence[RunWithQuestions]
) -> Viewer:
    """Ask the policy, once per open question, what ``who`` may answer."""
    yours = {
        question.interrupt_id
        for view in views
        for question in view.questions
        if question.status is QuestionStatus.OUTSTANDING and await policy(question, view.run, who)
    }
    return Viewer(who, policy, frozenset(yours))


def person_name(responder_id: str) -> str:
    """A console responder id (``console:ana``) as the name people know."""
    return responder_id.removeprefix(f"{SURFACE}:")


def conversations_json(
    summaries: Sequence[ConversationSummary],
    waiting: Mapping[str, tuple[int, int]],
    *,
    you: str,
    sign_in: bool,
    named: Collection[str] = (),
) -> dict[str, Any]:
    """The sidebar: each conversation with how many questions wait, and how many on ``you``.

    A conversation in ``named`` was named by an agent's route (``console:agents``):
    it is titled by that name, the one the agent and the docs use, rather than
    by its first question's summary.
    """
    return {
        "you": shown(you),
        "sign_in": sign_in,
        "conversations": [
            {
                "id": summary.key,
                "title": shown(summary.key if summary.key in named else summary.title),
                "updated_at": summary.updated_at,
                "runs": summary.runs,
                "waiting": waiting.get(summary.key, (0, 0))[0],
                "waiting_on_you": waiting.get(summary.key, (0, 0))[1],
            }
            for summary in summaries
        ],
    }


def asked_by_an_agent(views: Sequence[RunWithQuestions]) -> bool:
    """Whether an agent outside the bridge (the agents API) asked in this conversation."""
    return any(view.run.status is RunStatus.REMOTE for view in views)


def waiting_counts(views: Sequence[RunWithQuestions], viewer: Viewer) -> tuple[int, int]:
    """(questions open, of which ``viewer`` may answer) in one conversation."""
    open_count = mine = 0
    for view in views:
        for question in view.questions:
            if question.status is QuestionStatus.OUTSTANDING:
                open_count += 1
                mine += viewer.may_answer(question, view.run)
    return open_count, mine


def conversation_json(
    key: str, views: Sequence[RunWithQuestions], viewer: Viewer
) -> dict[str, Any]:
    return {"id": key, "runs": [run_json(view, viewer) for view in views]}


def run_json(view: RunWithQuestions, viewer: Viewer) -> dict[str, Any]:
    run = view.run
    return {
        "run_id": run.run_id,
        "text": shown(run.text),
        "requester": shown(run.requester),
        "asked_by": shown(person_name(run.requester)),
        "status": run.status.value,
        "final_text": shown(run.final_text),
        "created_at": run.created_at,
        "questions": [
            {
                **question_json(question, view.token_of(question)),
                "may_answer": shown(viewer.answerers(run, question)),
                "yours": viewer.may_answer(question, run),
            }
            for question in view.questions
        ],
    }


def question_json(record: Question, token: str = "") -> dict[str, Any]:
    """One question for the page; ``token`` (its answer's key) only while it is open."""
    outstanding = record.status is QuestionStatus.OUTSTANDING
    return {
        "asked_at": record.issued_at,
        "interrupt_id": record.interrupt_id,
        "name": shown(record.name),
        "kind": page_kind(record.payload),
        "payload": page_payload(record.payload),
        "status": record.status.value,
        "closed_by": shown(record.closed_by),
        "closed_at": record.closed_at,
        "expires_at": record.expires_at,
        # The answer as the /v1 object shows it: its row's JSON.
        "answer": shown(answer_json(record.answer)),
        "token": token if outstanding and token else None,
        "closed_text": shown(closed_text(record, answered=_answered_text)),
        # What an approval's edit changed, or the reply given instead, without who and when
        # (the page's closed line says those): "" for any other answer.
        "decision_detail": shown(decision_detail(record)),
        # Under a quorum, the votes so far ("1 of 2 approved: @ana"); "" otherwise.
        "tally": shown(tally_line(record)) if outstanding else "",
    }


def decision_detail(record: Question) -> str:
    """An approval answered with changes: the short diff; answered instead of run: the reply."""
    if record.name != APPROVAL or record.status is not QuestionStatus.ANSWERED:
        return ""
    match record.answer:
        case ApprovalDecision(decision="edit", arguments=edited, original_arguments=original):
            return diff_text(original or {}, edited or {})
        case ApprovalDecision(decision="respond", message=message):
            return message or ""
        case _:
            return ""


def _answered_text(record: Question, at: float) -> str:
    """An answer as the console words it: an approval's edit or reply says what it was."""
    if record.name == APPROVAL and decision_of(record.answer) in ("edit", "respond"):
        # Shown whole by the caller: the diff's values pass ``shown`` there.
        return approval_line(record.answer, record.closed_by, when(at), str)
    return answered_text(record.closed_by, at)
