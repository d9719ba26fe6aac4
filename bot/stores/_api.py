"""The agents API's rows, written once for both backends: its questions and its keys.

An API question's row is inserted by the lifecycle's ``ask_remote`` write
(``_unit``); here are the reads, joined with the question and its run so an
object is one statement, and the keys, of which only hashes are kept.
A question belongs to its key's id (``key_id``), never to the key's name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.questions.records import ApiKey, ApiView, QuestionStatus
from bot.stores import _rows
from bot.stores._rows import Row
from bot.stores._sql import Statements

_SELECT = (
    "SELECT "  # noqa: S608 - our own identifiers
    + ", ".join(
        [f"a.{c} AS a_{c}" for c in _rows.API_COLUMNS]
        + [f"p.{c} AS p_{c}" for c in _rows.PAUSE_COLUMNS]
        + [f"r.{c} AS r_{c}" for c in _rows.RUN_COLUMNS]
    )
    + " FROM api_questions AS a JOIN pauses AS p ON p.interrupt_id = a.interrupt_id"
    " JOIN runs AS r ON r.run_id = p.run_id"
)
_BY_ID = f"{_SELECT} WHERE a.interrupt_id = ?"
_BY_KEY = f"{_SELECT} WHERE a.key_id = ? AND a.idempotency_key = ?"
# Newest first; the cursor is the last row's (created_at, interrupt_id).
_PAGE = (
    f"{_SELECT} WHERE a.key_id = ?"
    " AND (CAST(? AS TEXT) IS NULL OR p.status = ?)"
    " AND (CAST(? AS TEXT) IS NULL OR a.run_ref = ?)"
    " AND (CAST(? AS TEXT) IS NULL OR a.created_at < CAST(? AS DOUBLE PRECISION)"
    " OR (a.created_at = CAST(? AS DOUBLE PRECISION) AND a.interrupt_id < ?))"
    " ORDER BY a.created_at DESC, a.interrupt_id DESC LIMIT ?"
)
# What migration 13 wrote as the key id of a question whose key name no stored key had.
UNOWNED = "name:"
_KEY_COLUMNS = "name, key_hash, routes, created_at, creates_per_minute, key_id"


class _Prefixed:
    """A joined row's columns of one table, read by their own names."""

    def __init__(self, row: Row, prefix: str) -> None:
        self._row = row
        self._prefix = prefix

    def __getitem__(self, key: str, /) -> Any:
        return self._row[self._prefix + key]


def _view(row: Row) -> ApiView:
    return ApiView(
        request=_rows.api_from_row(_Prefixed(row, "a_")),
        question=_rows.pause_from_row(_Prefixed(row, "p_"), []),
        run=_rows.run_from_row(_Prefixed(row, "r_")),
    )


def _key(row: Row) -> ApiKey:
    routes = json.loads(row["routes"])
    rate = row["creates_per_minute"]
    return ApiKey(
        row["name"],
        row["key_hash"],
        tuple(routes),
        float(row["created_at"]),
        creates_per_minute=None if rate is None else int(rate),
        key_id=row["key_id"],
    )


class SqlApiRecords:
    """The agents API's reads, and its keys."""

    def __init__(self, db: Statements) -> None:
        self._db = db

    async def get(self, interrupt_id: str) -> ApiView | None:
        rows = await self._db.rows(_BY_ID, interrupt_id)
        return _view(rows[0]) if rows else None

    async def by_idempotency_key(self, key_id: str, idempotency_key: str) -> ApiView | None:
        rows = await self._db.rows(_BY_KEY, key_id, idempotency_key)
        return _view(rows[0]) if rows else None

    async def page(
        self,
        key_id: str,
        *,
        status: QuestionStatus | None,
        run_ref: str | None,
        before: tuple[float, str] | None,
        limit: int,
    ) -> list[ApiView]:
        """The questions of key ``key_id``, newest first, older than ``before`` if given."""
        wanted = None if status is None else str(status)
        at, last = (None, None) if before is None else before
        marker = None if before is None else "after"
        params: Sequence[Any] = (
            key_id,
            wanted,
            wanted,
            run_ref,
            run_ref,
            marker,
            at,
            at,
            last,
            limit,
        )
        return [_view(row) for row in await self._db.rows(_PAGE, *params)]

    async def add_key(self, key: ApiKey) -> bool:
        """Keep ``key``; False (nothing kept) if its name is taken."""
        sql = (
            f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"  # noqa: S608 - our own identifiers
            " ON CONFLICT DO NOTHING"
        )
        routes = json.dumps(list(key.routes))
        values = (
            key.name,
            key.key_hash,
            routes,
            key.created_at,
            key.creates_per_minute,
            key.key_id,
        )
        return bool(await self._db.write(sql, *values))

    async def keys(self) -> list[ApiKey]:
        sql = f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY name"  # noqa: S608 - our own identifiers
        return [_key(row) for row in await self._db.rows(sql)]

    async def key_by_hash(self, key_hash: str) -> ApiKey | None:
        sql = f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?"  # noqa: S608 - our own identifiers
        rows = await self._db.rows(sql, key_hash)
        return _key(rows[0]) if rows else None

    async def claim_unowned(self, name: str, key_id: str) -> int:
        """Give key ``key_id`` the questions from before key ids that name no stored key
        but ``name``; how many it took."""
        sql = "UPDATE api_questions SET key_id = ? WHERE key_id = ?"
        return await self._db.write(sql, key_id, UNOWNED + name)

    async def revoke_key(self, name: str) -> bool:
        """Forget the key named ``name``; False if there was none."""
        return bool(await self._db.write("DELETE FROM api_keys WHERE name = ?", name))
