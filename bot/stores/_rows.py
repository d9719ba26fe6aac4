"""Records <-> rows, for both SQL backends: column lists, parameters, JSON text, mapping.

SQLite and PostgreSQL store exactly the same values, so the parameter
tuples and the row mapping live here once; each backend only writes its own
SQL (placeholders, upserts). A row is anything read by column name:
``Row`` and ``asyncpg.Record`` both are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Protocol

from bot.questions.write import Owe
from bot.stores.records import (
    AuditEvent,
    Delivery,
    DeliveryKind,
    DeliveryState,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)


class Row(Protocol):
    """A result row read by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


# One encoder: json.dumps with separators= builds a new encoder per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def dump(value: dict[str, Any] | None) -> str | None:
    """JSON text for a dict column; TypeError (before any SQL) if JSON cannot hold it."""
    return None if value is None else _ENCODER.encode(value)


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


PAUSE_COLUMNS = (
    "interrupt_id",
    "run_id",
    "scope",
    "name",
    "tool_call_id",
    "checkpoint_id",
    "payload",
    "issued_at",
    "expires_at",
    "root_run_id",
    "session_id",
    "thread_id",
    "status",
    "answer",
    "closed_by",
    "closed_at",
    "resumed_at",
    "message_ref",
    "closed_by_id",
    "cross_scope_count",
)
RUN_COLUMNS = (
    "run_id",
    "scope",
    "surface",
    "requester",
    "text",
    "created_at",
    "conversation",
    "status",
    "updated_at",
    "final_text",
    "lease_owner",
    "lease_until",
    "delivery_error",
)


def pause_params(record: Question) -> tuple[Any, ...]:
    """``record`` as the upsert's parameters, in ``PAUSE_COLUMNS`` order."""
    return (
        record.interrupt_id,
        record.run_id,
        record.scope,
        record.name,
        record.tool_call_id,
        record.checkpoint_id,
        dump(record.payload),
        record.issued_at,
        record.expires_at,
        record.root_run_id,
        record.session_id,
        record.thread_id,
        str(record.status),
        dump(record.answer),
        record.closed_by,
        record.closed_at,
        record.resumed_at,
        dump(record.message_ref),
        record.closed_by_id,
        record.cross_scope_count,
    )


def pauses_from_rows(rows: Iterable[Row]) -> list[Question]:
    """Fold ``pauses_query`` rows (one per attempt, or one with NULL) into records."""
    grouped: dict[str, tuple[Row, list[Any]]] = {}
    for row in rows:
        _, attempts = grouped.setdefault(row["interrupt_id"], (row, []))
        if row["attempt_json"] is not None:
            attempts.append(load(row["attempt_json"]))
    return [pause_from_row(row, attempts) for row, attempts in grouped.values()]


def pause_from_row(row: Row, attempts: list[Any]) -> Question:
    """A row with ``PAUSE_COLUMNS``, and the pause's cross-scope attempts, as a record."""
    return Question(
        interrupt_id=row["interrupt_id"],
        run_id=row["run_id"],
        scope=row["scope"],
        name=row["name"],
        tool_call_id=row["tool_call_id"],
        checkpoint_id=row["checkpoint_id"],
        payload=load(row["payload"]),
        issued_at=row["issued_at"],
        expires_at=row["expires_at"],
        root_run_id=row["root_run_id"],
        session_id=row["session_id"],
        thread_id=row["thread_id"],
        status=QuestionStatus(row["status"]),
        answer=load(row["answer"]),
        closed_by=row["closed_by"],
        closed_at=row["closed_at"],
        resumed_at=row["resumed_at"],
        message_ref=load(row["message_ref"]),
        cross_scope_attempts=tuple(attempts),
        cross_scope_count=row["cross_scope_count"],
        closed_by_id=row["closed_by_id"],
    )


def run_params(run: RunRecord) -> tuple[Any, ...]:
    """``run`` as the insert's parameters, in ``RUN_COLUMNS`` order, conversation_key last."""
    return (
        run.run_id,
        run.scope,
        run.surface,
        run.requester,
        run.text,
        run.created_at,
        dump(run.conversation),
        str(run.status),
        run.updated_at,
        run.final_text,
        run.lease_owner,
        run.lease_until,
        run.delivery_error,
        # The memory backend groups conversations by this very expression.
        str(run.conversation.get("key", "")),
    )


def run_from_row(row: Row) -> RunRecord:
    return RunRecord(
        run_id=row["run_id"],
        scope=row["scope"],
        surface=row["surface"],
        requester=row["requester"],
        text=row["text"],
        created_at=row["created_at"],
        conversation=load(row["conversation"]),
        status=RunStatus(row["status"]),
        updated_at=row["updated_at"],
        final_text=row["final_text"],
        lease_owner=row["lease_owner"],
        lease_until=row["lease_until"],
        delivery_error=row["delivery_error"],
    )


def audit_params(event: AuditEvent, *, run_id: str = "") -> tuple[Any, ...]:
    """``event`` as the insert's parameters; ``run_id`` stands in for a blank one."""
    return (
        event.at,
        event.kind,
        event.run_id or run_id,
        event.interrupt_id,
        event.actor,
        dump(event.detail),
    )


def audit_from_row(row: Row) -> AuditEvent:
    return AuditEvent(
        at=row["at"],
        kind=row["kind"],
        run_id=row["run_id"],
        interrupt_id=row["interrupt_id"],
        actor=row["actor"],
        detail=load(row["detail"]),
    )


def delivery_from_row(row: Row, *, followed: bool = False) -> Delivery:
    return Delivery(
        delivery_id=row["id"],
        run_id=row["run_id"],
        surface=row["surface"],
        kind=DeliveryKind(row["kind"]),
        interrupt_id=row["interrupt_id"],
        body=load(row["body"]),
        attempts=row["attempts"],
        state=DeliveryState(row["state"]),
        next_at=row["next_at"],
        last_error=row["last_error"],
        followed=followed,
    )


def owed_delivery(
    delivery_id: int,
    run_id: str,
    surface: str,
    owe: Owe,
    at: float,
    question: Question | None,
) -> Delivery:
    """An outbox row as the write that owed it left it; a post or an edit carries the
    question as that write left it, so its first delivery reads nothing."""
    carried = question if owe.kind in (DeliveryKind.PUBLISH, DeliveryKind.CLOSED) else None
    return Delivery(
        delivery_id,
        run_id,
        surface,
        owe.kind,
        owe.interrupt_id,
        dict(owe.body),
        next_at=at,
        pause=carried,
    )
