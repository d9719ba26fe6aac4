"""Continuing a paused turn once its pause has closed."""

from __future__ import annotations

import json
from typing import Any

from bot.human.capability import ASK_USER
from bot.kernel.state import restore
from bot.kernel.turn import Agent, TurnOutcome
from bot.messages import when
from bot.stores.ports import Checkpoints
from bot.stores.records import PauseRecord, PauseStatus


class CheckpointMissingError(LookupError):
    """The paused turn's checkpoint is gone; the run cannot continue."""


def observation_for(record: PauseRecord) -> str:
    """What the model reads as the paused call's result.

    An expiry is reported as no answer, never as a refusal: the person did
    not say no, and a model told "rejected" would act on a decision nobody made.
    """
    match record.status:
        case PauseStatus.ANSWERED:
            return _answer_text(record.name, record.answer or {}, record.closed_by)
        case PauseStatus.EXPIRED:
            return (
                f"No answer: the question expired at {when(record.closed_at or 0)} before "
                "anyone replied. This is not a refusal; do not act as if it were answered."
            )
        case PauseStatus.CANCELLED:
            return (
                f"No answer: the question was cancelled by {record.closed_by}. Stop the "
                "action that needed it."
            )
        case PauseStatus.OUTSTANDING:
            raise ValueError("an outstanding pause has nothing to resume with")


def _answer_text(name: str, answer: dict[str, Any], by: str) -> str:
    if name == ASK_USER:
        lines = [f"{by} answered:"]
        for question, reply in answer.get("answers", {}).items():
            shown = ", ".join(reply) if isinstance(reply, list) else reply
            lines.append(f"- {question} -> {shown}")
        return "\n".join(lines)
    return f"{by} answered: {json.dumps(answer, sort_keys=True)}"


async def resume_turn(agent: Agent, checkpoints: Checkpoints, record: PauseRecord) -> TurnOutcome:
    """Load the checkpoint and join the closed pause onto its call id."""
    data = await checkpoints.load(record.checkpoint_id)
    if data is None:
        raise CheckpointMissingError(
            f"checkpoint {record.checkpoint_id!r} of run {record.run_id!r} is missing"
        )
    request, state = restore(data)
    return await agent.resume(
        request, state, observations={record.tool_call_id: observation_for(record)}
    )
