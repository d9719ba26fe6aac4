"""Records <-> PostgreSQL rows, and the SQL fragments the state changes share.

The parameter tuples and JSON text come from ``bot.stores._sqlite_rows``, so
both SQL backends store exactly the same values; only the placeholders
(``$n``) and the row type differ.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from bot.stores._sqlite_rows import PAUSE_COLUMNS, RUN_COLUMNS, load
from bot.stores.records import (
    AuditEvent,
    Delivery,
    DeliveryKind,
    DeliveryState,
    PauseRecord,
    PauseStatus,
    RunRecord,
    RunStatus,
)

CHANNEL = "bot_changes"

_RUN_WRITE_COLUMNS = (*RUN_COLUMNS, "conversation_key")


def _placeholders(count: int) -> str:
    return ", ".join(f"${i}" for i in range(1, count + 1))


# ``inserted``: true for a new row, false for an update (xmax is 0 only on a
# row version no transaction has replaced), read in the same statement so two
# replicas issuing the same id cannot both see "new".
UPSERT_PAUSE = (
    f"INSERT INTO pauses ({', '.join(PAUSE_COLUMNS)})"  # noqa: S608 - our own identifiers
    f" VALUES ({_placeholders(len(PAUSE_COLUMNS))}) ON CONFLICT (interrupt_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in PAUSE_COLUMNS if c != "interrupt_id")
    + " RETURNING (xmax = 0) AS inserted"
)
INSERT_RUN = (
    f"INSERT INTO runs ({', '.join(_RUN_WRITE_COLUMNS)})"  # noqa: S608 - our own identifiers
    f" VALUES ({_placeholders(len(_RUN_WRITE_COLUMNS))}) ON CONFLICT (run_id) DO NOTHING"
    " RETURNING seq"
)
SELECT_RUNS = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"  # noqa: S608 - our own identifiers
INSERT_AUDIT = (
    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail)"
    " VALUES ($1, $2, $3, $4, $5, $6)"
)

_OUTBOX_COLUMNS = (
    "run_id, surface, kind, interrupt_id, body, created_at, state,"
    " attempts, next_at, claimed_until, claimed_by, last_error"
)
INSERT_OUTBOX = f"INSERT INTO outbox ({_OUTBOX_COLUMNS})"
PENDING = str(DeliveryState.PENDING)
OUTSTANDING = str(PauseStatus.OUTSTANDING)


def notice(source: str) -> str:
    """A CTE body announcing on ``CHANNEL`` that each run in ``source`` changed.

    ``source`` must have ``run_id``, ``surface`` and ``conversation_key``
    columns. PostgreSQL delivers the notice at commit, and only if the
    transaction commits. The payload names the schema, since NOTIFY reaches
    every listener of the database, whatever its search_path.
    """
    return (
        f"SELECT pg_notify('{CHANNEL}', json_build_object('schema', current_schema(),"  # noqa: S608 - our own text
        " 'run_id', n.run_id, 'surface', n.surface, 'key', n.conversation_key)::text)"
        f" FROM {source} AS n"
    )


def pauses_query(where: str, order: str, *, limit: str = "ALL", lock: str = "") -> str:
    """Pauses matching ``where`` (alias ``p``), in ``order``, each with its attempts.

    One statement, so one snapshot: a pause and its attempts always agree.
    The pauses are chosen (and limited) before the join, so the limit
    counts pauses rather than attempts; ``lock`` (``FOR UPDATE ...``) locks
    the chosen pauses only.
    """
    columns = ", ".join(f"p.{c}" for c in PAUSE_COLUMNS)
    return (
        f"SELECT {columns}, a.attempt_json FROM"  # noqa: S608 - our own identifiers
        f" (SELECT * FROM pauses AS p {where} ORDER BY {order} LIMIT {limit} {lock}) AS p"
        " LEFT JOIN cross_scope_attempts AS a ON a.interrupt_id = p.interrupt_id"
        f" ORDER BY {order}, a.seq"
    )


def pauses_from_rows(rows: list[asyncpg.Record]) -> list[PauseRecord]:
    """Fold ``pauses_query`` rows (one per attempt, or one with NULL) into records."""
    grouped: dict[str, tuple[asyncpg.Record, list[Any]]] = {}
    for row in rows:
        _, attempts = grouped.setdefault(row["interrupt_id"], (row, []))
        if row["attempt_json"] is not None:
            attempts.append(load(row["attempt_json"]))
    return [_pause_from_row(row, attempts) for row, attempts in grouped.values()]


def _pause_from_row(row: asyncpg.Record, attempts: list[Any]) -> PauseRecord:
    return PauseRecord(
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
        status=PauseStatus(row["status"]),
        answer=load(row["answer"]),
        closed_by=row["closed_by"],
        closed_at=row["closed_at"],
        resumed_at=row["resumed_at"],
        message_ref=load(row["message_ref"]),
        cross_scope_attempts=tuple(attempts),
        cross_scope_count=row["cross_scope_count"],
        closed_by_id=row["closed_by_id"],
    )


def run_from_row(row: asyncpg.Record) -> RunRecord:
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


def audit_from_row(row: asyncpg.Record) -> AuditEvent:
    return AuditEvent(
        at=row["at"],
        kind=row["kind"],
        run_id=row["run_id"],
        interrupt_id=row["interrupt_id"],
        actor=row["actor"],
        detail=load(row["detail"]),
    )


def delivery_from_row(row: asyncpg.Record) -> Delivery:
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
    )
