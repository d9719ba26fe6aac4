"""The writes of one pause, in the order that makes it all or nothing.

Checkpoint first (the token names its id), then the token is encoded and
length-checked, then the audit event, and the ledger row last, because the
row is what makes a question outstanding. A step that fails undoes the ones
before it, so a refused pause leaves no outstanding row and no checkpoint
that nothing refers to.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bot.human.errors import HumanInteractionError
from bot.human.ports import Audit, Checkpoints, Ledger
from bot.human.tokens import MAX_TOKEN_CHARS, MintedToken, TokenError
from bot.questions.records import AuditEvent, Question

log = logging.getLogger(__name__)
T = TypeVar("T")

# A store having a bad minute is a refusal (the model is told, the turn goes
# on); a port wired wrong is a bug that must crash the stage and be seen.
_WIRING_BUGS = (TypeError, AttributeError)


async def port_call(port: str, call: Awaitable[T]) -> T:
    """Await a store call; a store's bad minute becomes a refusal, a wiring bug stays a crash."""
    try:
        return await call
    except _WIRING_BUGS:
        raise
    except Exception as error:
        raise HumanInteractionError(
            f"the {port} refused the pause ({type(error).__name__})"
        ) from error


async def record_turn(
    checkpoints: Checkpoints | None,
    run_id: str,
    checkpoint_id: str | None,
    turn_state: dict[str, Any],
) -> tuple[str, bool]:
    """The checkpoint id the pause binds to, and whether our store acknowledged the state.

    A bound id is used as given. With no store, the deployment's own saver
    holds the state under that id and nothing here measured a write, so the
    pause says ``resumable=False``. With a store, the state is saved under
    the bound id (or a new one) and the store must answer with that id;
    anything else is a refusal.
    """
    if checkpoints is None:
        if checkpoint_id is None:
            raise HumanInteractionError(
                "no checkpoint id was bound and no checkpoint store is configured, "
                "so the paused turn could never be continued"
            )
        return checkpoint_id, False
    if checkpoint_id is None:
        saving = checkpoints.save(run_id, turn_state)
    else:
        saving = checkpoints.save(run_id, turn_state, checkpoint_id=checkpoint_id)
    saved = await port_call("checkpoint store", saving)
    if not saved or (checkpoint_id is not None and saved != checkpoint_id):
        if saved:
            await discard(checkpoints, saved)
        raise HumanInteractionError(
            f"the checkpoint store did not acknowledge the turn state (it answered {saved!r})"
        )
    return saved, True


async def discard(checkpoints: Checkpoints | None, checkpoint_id: str) -> None:
    """Undo a checkpoint write; best effort, because the pause is refused either way."""
    if checkpoints is None:
        return
    try:
        await checkpoints.discard(checkpoint_id)
    except Exception:
        # An unreferenced checkpoint is garbage, not a question anyone can see.
        log.warning("could not discard checkpoint %s", checkpoint_id, exc_info=True)


def encoded(encode: Callable[[MintedToken], str], minted: MintedToken) -> str:
    """Encode and length-check the token before anything outstanding exists."""
    try:
        token = encode(minted)
    except TokenError as error:
        raise HumanInteractionError(f"the resume token could not be encoded: {error}") from error
    if not isinstance(token, str) or not token or len(token) >= MAX_TOKEN_CHARS:
        size = len(token) if isinstance(token, str) else 0
        raise HumanInteractionError(
            f"the encoder returned no usable resume token ({size} characters; it must be "
            f"non-empty and under {MAX_TOKEN_CHARS})"
        )
    return token


async def issue(ledger: Ledger | None, audit: Audit | None, record: Question, now: float) -> None:
    """Audit, then write the row; a row that could not be written withdraws the audit event.

    The audit log is append-only, so the undo is a second event rather than
    a deletion; the ledger row, written last, needs no undo.
    """
    detail = {"name": record.name}
    if audit is not None:
        paused = AuditEvent(now, "paused", record.run_id, record.interrupt_id, detail=detail)
        await port_call("audit log", audit.append(paused))
    if ledger is None:
        return
    try:
        await port_call("issuance ledger", ledger.issue(record))
    except BaseException:
        if audit is not None:
            withdrawn = AuditEvent(
                now, "pause-withdrawn", record.run_id, record.interrupt_id, detail=detail
            )
            try:
                await audit.append(withdrawn)
            except Exception:
                log.warning("could not audit a withdrawn pause", exc_info=True)
        raise
