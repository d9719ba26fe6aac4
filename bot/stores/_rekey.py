"""Rekey: the sealed content columns moved onto the current data key, a batch at a time.

``python -m bot data rekey`` calls it while the bridge serves: each batch
reads rows not yet under the current key (older keys', or plaintext from
before ``BOT_DATA_KEYS``), seals them again and writes each back only if it
still holds what was read, in one short transaction; a row a close changed
meanwhile is read again by the next batch. At start, ``probe`` opens one
sealed value, so a missing or wrong key is one sentence, not a failure on
the first question read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.stores import data_keys
from bot.stores._rows import PLAIN_DETAILS, Row, aad, audit_aad
from bot.stores._sql import Statements

REKEY_BATCH = 200


@dataclass(frozen=True, slots=True)
class _Sealed:
    """One sealed column: its table, the columns naming a row, and its associated data."""

    table: str
    column: str
    keys: tuple[str, ...]
    reads: tuple[str, ...]
    aad: Callable[[Row], str]
    where: str = ""


_SEALED = (
    _Sealed(
        "pauses",
        "payload",
        ("interrupt_id",),
        (),
        lambda r: aad("pauses", "payload", r["interrupt_id"]),
    ),
    _Sealed(
        "pauses",
        "answer",
        ("interrupt_id",),
        (),
        lambda r: aad("pauses", "answer", r["interrupt_id"]),
    ),
    _Sealed(
        "votes",
        "answer",
        ("interrupt_id", "voter"),
        (),
        lambda r: aad("votes", "answer", r["interrupt_id"], r["voter"]),
    ),
    _Sealed(
        "api_questions",
        "metadata",
        ("interrupt_id",),
        (),
        lambda r: aad("api_questions", "metadata", r["interrupt_id"]),
    ),
    _Sealed(
        "outbox",
        "body",
        ("id",),
        ("interrupt_id", "kind"),
        lambda r: aad("outbox", "body", r["interrupt_id"], r["kind"]),
    ),
    _Sealed(
        "checkpoints",
        "state",
        ("checkpoint_id",),
        (),
        lambda r: aad("checkpoints", "state", r["checkpoint_id"]),
    ),
    _Sealed(
        "journal",
        "value",
        ("run_id", "step"),
        (),
        lambda r: aad("journal", "value", r["step"]),
    ),
    _Sealed(
        "audit",
        "detail",
        ("id",),
        ("interrupt_id", "kind", "at"),
        lambda r: audit_aad(r["interrupt_id"], r["kind"], r["at"]),
        # A detail stored as it is stays so; one sealed before (under an older key) moves.
        f" AND (kind NOT IN ({', '.join(repr(kind) for kind in sorted(PLAIN_DETAILS))})"
        f" OR substr(detail, 1, {len(data_keys.MARKER)}) = '{data_keys.MARKER}')",
    ),
)


class SqlRekey:
    """Probes the keys at start, and moves rows onto the current key; both backends."""

    def __init__(self, db: Statements) -> None:
        self._db = db

    async def probe(self) -> None:
        """Open one sealed value; DataKeyError, one sentence, if the keyring cannot."""
        rows = await self._db.rows(
            "SELECT interrupt_id, payload FROM pauses WHERE substr(payload, 1, ?) = ? LIMIT 1",
            len(data_keys.MARKER),
            data_keys.MARKER,
        )
        for row in rows:
            data_keys.unseal(row["payload"], aad("pauses", "payload", row["interrupt_id"]))

    async def batch(self, limit: int = REKEY_BATCH) -> int:
        """Move up to ``limit`` rows of the first column with any left; how many were read
        (0: every row is under the current key)."""
        keys = data_keys.in_use()
        if keys is None:
            raise data_keys.DataKeyError(
                "BOT_DATA_KEYS is not set: there is no key to rekey onto; generate one with "
                f"`{data_keys.GENERATE}`"
            )
        prefix = f"{data_keys.MARKER}{keys.current}:"
        for sealed in _SEALED:
            names = ", ".join((*sealed.keys, *sealed.reads, sealed.column))
            rows = await self._db.rows(
                f"SELECT {names} FROM {sealed.table} WHERE {sealed.column} IS NOT NULL"  # noqa: S608 - our own identifiers
                f" AND substr({sealed.column}, 1, ?) <> ? AND {sealed.column} <> ?{sealed.where}"
                " LIMIT ?",
                len(prefix),
                prefix,
                data_keys.EMPTY,
                limit,
            )
            if not rows:
                continue
            where = " AND ".join(f"{key} = ?" for key in sealed.keys)
            update = (
                f"UPDATE {sealed.table} SET {sealed.column} = ?"  # noqa: S608 - our own identifiers
                f" WHERE {where} AND {sealed.column} = ?"
            )
            statements: list[tuple[str, tuple[Any, ...]]] = []
            for row in rows:
                was = row[sealed.column]
                bound = sealed.aad(row)
                now = keys.seal(data_keys.unseal(was, bound) or "", bound)
                statements.append((update, (now, *(row[k] for k in sealed.keys), was)))
            await self._db.in_order(statements)
            return len(rows)
        return 0

    async def all(self) -> int:
        """Every row onto the current key, batch by batch; how many rows were moved."""
        total = 0
        while moved := await self.batch():
            total += moved
        return total
