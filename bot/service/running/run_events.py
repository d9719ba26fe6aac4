"""One log line per step of a run, so an operator can follow it with ``grep run_id``.

Every line carries the run id (and the pause id once there is one) as
fields, never a token: callers pass ids and names only. One function per
event keeps the call sites to a single line.
"""

from __future__ import annotations

import logging

from bot.questions.records import Question

log = logging.getLogger("bot.run_events")


def _event(event: str, run_id: str, interrupt_id: str = "", **fields: object) -> None:
    if not log.isEnabledFor(logging.INFO):
        return  # on the answer's hot path: build nothing that will not be written
    detail = " ".join(f"{key}={value}" for key, value in fields.items() if value != "")
    log.info(
        "run %s %s%s",
        run_id or "-",
        event,
        f" ({detail})" if detail else "",
        extra={"event": event, "run_id": run_id, "interrupt_id": interrupt_id, **fields},
    )


def started(run_id: str, *, by: str, surface: str) -> None:
    _event("started", run_id, by=by, surface=surface)


def asked(run_id: str, interrupt_id: str, *, interaction: str) -> None:
    _event("asked", run_id, interrupt_id, interaction=interaction)


def answered(run_id: str, interrupt_id: str, *, by: str) -> None:
    _event("answered", run_id, interrupt_id, by=by)


def refused(record: Question | None, *, reason: str, by: str) -> None:
    """A refused answer; ``record`` is None when the token named no known question."""
    run_id, interrupt_id = (record.run_id, record.interrupt_id) if record else ("", "")
    _event("refused", run_id, interrupt_id, reason=reason, by=by)


def resumed(run_id: str, interrupt_id: str) -> None:
    _event("resumed", run_id, interrupt_id)


def expired(run_id: str, interrupt_id: str) -> None:
    _event("expired", run_id, interrupt_id)


def cancelled(run_id: str, interrupt_id: str, *, by: str) -> None:
    _event("cancelled", run_id, interrupt_id, by=by)


def closed(status: str, run_id: str, interrupt_id: str, *, by: str) -> None:
    """Closed without an answer: ``expired`` by the sweeper or ``cancelled`` by someone."""
    if status == "cancelled":
        cancelled(run_id, interrupt_id, by=by)
    else:
        expired(run_id, interrupt_id)


def completed(run_id: str) -> None:
    _event("completed", run_id)


def failed(run_id: str, *, error: str) -> None:
    _event("failed", run_id, error=error)
