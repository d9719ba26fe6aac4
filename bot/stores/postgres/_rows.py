"""Records <-> PostgreSQL rows, and the SQL fragments the state changes share.

The parameter tuples, JSON text and row mapping come from
``bot.stores._rows``, so both SQL backends store and read exactly the same
values; only the placeholders (``$n``) differ.
"""

from __future__ import annotations

from bot.stores._rows import PAUSE_COLUMNS, RUN_COLUMNS
from bot.stores.records import DeliveryState, QuestionStatus

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
OUTSTANDING = str(QuestionStatus.OUTSTANDING)


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
