"""SQLite's own SQL for the records: upserts, inserts and the pause query.

Every SQL string here is built once, at import, from our own identifiers, so
each query has one fixed text and the connection's prepared-statement cache
(``sqlite3.connect(cached_statements=...)``) keeps hitting. The values and
row mapping shared with PostgreSQL are in ``bot.stores._rows``.
"""

from __future__ import annotations

from bot.stores._rows import PAUSE_COLUMNS, RUN_COLUMNS

# Written, never read back: it is derived from ``conversation``.
_RUN_WRITE_COLUMNS = (*RUN_COLUMNS, "conversation_key")


def _upsert_sql(table: str, key: str, columns: tuple[str, ...]) -> str:
    # An upsert, not INSERT OR REPLACE: REPLACE deletes the row, giving it a
    # new seq (so a new place in insertion order) and cascading to children;
    # the memory backend's dict assignment keeps the row's place.
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != key)
    return (
        f"INSERT INTO {table} ({', '.join(columns)})"  # noqa: S608 - our own identifiers
        f" VALUES ({', '.join('?' for _ in columns)})"
        f" ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )


UPSERT_PAUSE = _upsert_sql("pauses", "interrupt_id", PAUSE_COLUMNS)
INSERT_RUN = (
    f"INSERT INTO runs ({', '.join(_RUN_WRITE_COLUMNS)})"  # noqa: S608 - our own identifiers
    f" VALUES ({', '.join('?' for _ in _RUN_WRITE_COLUMNS)}) ON CONFLICT (run_id) DO NOTHING"
)
SELECT_RUNS = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"  # noqa: S608 - our own identifiers


def pauses_query(where: str, order: str) -> str:
    """Pauses matching ``where`` (alias ``p``), in ``order``, each with its attempts.

    One statement, so one snapshot: a pause and its attempts always agree
    without an explicit read transaction. The pauses are chosen (and
    limited, by the last parameter; -1 for all) before the join, so the limit
    counts pauses rather than attempts. ``order`` must name ``p.`` columns;
    it is valid both inside and outside the subquery, which is aliased ``p``
    too.
    """
    columns = ", ".join(f"p.{c}" for c in PAUSE_COLUMNS)
    return (
        f"SELECT {columns}, a.attempt_json FROM"  # noqa: S608 - our own identifiers
        f" (SELECT * FROM pauses AS p {where} ORDER BY {order} LIMIT ?) AS p"
        " LEFT JOIN cross_scope_attempts AS a ON a.interrupt_id = p.interrupt_id"
        f" ORDER BY {order}, a.seq"
    )
