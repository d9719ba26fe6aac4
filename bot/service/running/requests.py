"""A run as the turn it starts: its request, with the conversation's earlier exchanges."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

from bot.kernel.messages import Message
from bot.kernel.state import TurnRequest
from bot.questions.records import RunRecord, RunStatus
from bot.service.delivering.surfaces import Conversation
from bot.stores.ports import Runs

# Finished runs of the same conversation replayed to the model as context.
HISTORY_RUNS = 10


def run_id_for(where: Conversation, key: str | None) -> str:
    """A run id derived from the platform's id for the message, so a retry starts nothing."""
    if key is None:
        return f"run_{secrets.token_hex(8)}"
    digest = hashlib.sha256(f"{where.surface}\x00{where.scope}\x00{key}".encode()).hexdigest()
    return f"run_{digest[:16]}"


async def turn_request(
    runs: Runs, run: RunRecord, earlier: Sequence[RunRecord] | None = None
) -> TurnRequest:
    """The first turn's request: the person's text, where it was said, and what came before
    (``earlier``: the conversation's latest runs, as the run's start read them; None reads)."""
    return TurnRequest(
        text=run.text,
        scope=run.scope,
        run_id=run.run_id,
        root_run_id=run.run_id,
        session_id=str(run.conversation.get("key", "")),
        thread_id=str(run.conversation.get("thread", "")),
        history=await _history_of(runs, run, earlier),
    )


async def _history_of(
    runs: Runs, run: RunRecord, earlier: Sequence[RunRecord] | None
) -> tuple[Message, ...]:
    """Earlier finished exchanges of the run's conversation, so a follow-up continues it."""
    if earlier is None:
        key = str(run.conversation.get("key", ""))
        earlier = await runs.in_conversation(run.surface, key, limit=HISTORY_RUNS + 1)
    history: list[Message] = []
    for before in earlier:
        done = before.status is RunStatus.COMPLETED and before.final_text
        if done and before.created_at <= run.created_at and before.run_id != run.run_id:
            history += [Message("user", before.text), Message("assistant", before.final_text)]
    return tuple(history)
