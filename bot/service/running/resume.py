"""Continuing a paused turn once its pause has closed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from bot.contract.answers import ApprovalDecision, AskUserAnswers, answer_json
from bot.contract.edits import changes
from bot.errors import BotError
from bot.human.capability import ASK_USER
from bot.kernel.state import restore
from bot.kernel.turn import Agent, TurnOutcome
from bot.questions.records import Question, QuestionStatus
from bot.questions.write import TurnToResume
from bot.stores.ports import Checkpoints


class CheckpointMissingError(BotError, LookupError):
    """The paused turn's checkpoint is gone; the run cannot continue."""


NOT_A_REFUSAL = "This is not a refusal; do not act as if it were answered."


def observation_for(record: Question) -> str:
    """What the model reads as the paused call's result: JSON data, never prose.

    Everything a person supplied (their answers, their display name) is a
    JSON value, so no text they type can read as the bridge speaking. An
    expiry or a cancellation is reported as no answer, never as a refusal:
    the person did not say no, and a model told "rejected" would act on a
    decision nobody made.
    """
    data: dict[str, Any] = {"interaction": record.name, "status": str(record.status)}
    match record.status:
        case QuestionStatus.ANSWERED:
            data["responder"] = {"id": record.closed_by_id, "name": record.closed_by}
            data["answered_at"] = iso(record.closed_at or 0)
            answer = record.answer
            if record.name == ASK_USER:
                replies = answer.answers if isinstance(answer, AskUserAnswers) else {}
                data["answers"] = [
                    {"question": question, "answer": reply} for question, reply in replies.items()
                ]
            else:
                data["answer"] = answer_json(answer) or {}
            match answer:
                case ApprovalDecision(decision="edit"):
                    # The call the model made stays as it made it (the journal's record of its
                    # reply); what the person changed is said here, each value as JSON data.
                    data["changes"] = [
                        {"argument": name, "asked": before, "approved": after}
                        for name, before, after in changes(
                            dict(answer.original_arguments or {}), dict(answer.arguments or {})
                        )
                    ]
                    data["note"] = (
                        "Approved with changes: the person changed the arguments listed in "
                        "changes. Perform the action with answer.arguments, not the arguments "
                        "you asked with (answer.original_arguments)."
                    )
                case ApprovalDecision(decision="respond"):
                    data["note"] = (
                        "Not approved: the person answered in the action's place. Do not perform "
                        "the action; answer.message is their reply to you."
                    )
        case QuestionStatus.EXPIRED:
            data["expired_at"] = iso(record.closed_at or 0)
            if record.answer is not None:
                # The question's policy fails closed: its expiry is a rejection.
                data["answer"] = answer_json(record.answer)
                data["note"] = (
                    "No answer arrived before the question expired, and its policy rejects"
                    " on expiry: treat it as rejected and do not perform the action."
                )
            else:
                data["note"] = f"No answer arrived before the question expired. {NOT_A_REFUSAL}"
        case QuestionStatus.CANCELLED:
            data["cancelled_by"] = {"id": record.closed_by_id, "name": record.closed_by}
            # An admin's reason rides on the row's answer, and reaches the model as a value.
            if record.cancel_reason:
                data["reason"] = record.cancel_reason
            data["note"] = (
                f"No answer: the question was cancelled. {NOT_A_REFUSAL} "
                "Stop the action that needed it."
            )
        case QuestionStatus.OUTSTANDING:
            raise ValueError("an outstanding pause has nothing to resume with")
    return json.dumps(data, ensure_ascii=False)


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


async def resume_turn(
    agent: Agent, checkpoints: Checkpoints, record: Question, turn: TurnToResume | None = None
) -> TurnOutcome:
    """Load the checkpoint (unless the close read it: ``turn``) and join the closed pause
    onto its call id."""
    data = await checkpoints.load(record.checkpoint_id) if turn is None else turn.state
    if data is None:
        raise CheckpointMissingError(
            f"checkpoint {record.checkpoint_id!r} of run {record.run_id!r} is missing"
        )
    request, state = restore(dict(data))
    observations = {record.tool_call_id: observation_for(record)}
    journal = None if turn is None else turn.journal
    return await agent.resume(request, state, observations=observations, journal=journal)
