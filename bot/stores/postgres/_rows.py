"""Records <-> PostgreSQL rows, and the SQL fragments the state changes share.

The parameter tuples, JSON text and row mapping come from
``bot.stores._rows``, so both SQL backends store and read exactly the same
values; only the placeholders (``$n``) differ.
"""

from __future__ import annotations

from dataclasses import replace

from bot.stores._rows import PAUSE_COLUMNS, RUN_COLUMNS, Row
from bot.stores.handoff import Owed
from bot.stores.records import Delivery, DeliveryState, PauseStatus

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


# What a state change's ``owed`` CTE (``RETURNING id, surface, claimed_by,
# claimed_until``) hands over (``bot.stores.handoff``), with the run's pending
# rows. The statement cannot see its own insert, so every pending row it sees
# is older. (One written by a transaction that commits while this statement
# waits on a lock is not seen; issue, spend and finish lock the run's row or
# the pause's, so only an admin command's row can be missed, and delivered
# after a close it does nothing.)
def owed_columns(run_id: str) -> str:
    return (
        "(SELECT id FROM owed) AS owed_id, (SELECT surface FROM owed) AS owed_surface,"  # noqa: S608 - our own text
        " (SELECT claimed_by FROM owed) AS held_by,"
        " (SELECT claimed_until FROM owed) AS held_until,"
        f" ARRAY(SELECT e.id FROM outbox AS e WHERE e.run_id = {run_id}"
        f" AND e.state = '{PENDING}' ORDER BY e.id) AS earlier"
    )


def owed_from_row(row: Row, delivery: Delivery) -> Owed | None:
    """``delivery`` as written, completed from a row read with ``owed_columns``, as
    its hand-off; None if the statement owed nothing."""
    if row["owed_id"] is None:
        return None
    written = replace(delivery, delivery_id=row["owed_id"], surface=row["owed_surface"])
    return Owed(written, row["held_by"], row["held_until"], tuple(row["earlier"]))
