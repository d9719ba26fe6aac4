"""The audit's chains as both SQL backends keep them: checkpoints, the export, old rows carried.

Events are linked as they are inserted, one head row per chain (a run, or
``BRIDGE_CHAIN``). On PostgreSQL a trigger links each row under its chain's
head row (migration 15), so only writes about the same run wait on each
other's link, on any replica. On SQLite, whose writers take turns, the insert
itself links the event to its chain's newest row (``INSERT_LINKED_AUDIT``), and
the heads are brought up to date from the rows added since when a checkpoint or
an export reads them (``REFRESH_HEADS``, migration 18). A checkpoint signs the
heads that moved since the last one; replicas racing to write the
same checkpoint number are decided by its primary key (the loser writes
nothing), so checkpoints form one chain without a lock held by the writers
of events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from bot.audit import (
    BRIDGE_CHAIN,
    CheckpointKey,
    Linker,
    canonical,
    chain_of,
    checkpoint_hash,
    event_digest,
    sign_checkpoint,
)
from bot.stores._rows import Row, audit_detail
from bot.stores._sql import Statements

INSERT_AUDIT = (
    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
# SQLite: INSERT_AUDIT's parameters; the event follows its chain's newest row, found
# through the chain index (a probe for its number, one for its hash: cheaper than a join),
# with ``bot.audit``'s genesis and link (the connection's SQL functions, ``sqlite._db``).
# The row and its index entry are written once, and no head row per event: a page less of
# each commit than a trigger writing the head, and the row again.
_CHAIN_OF_EVENT = f"CASE ?3 WHEN '' THEN '{BRIDGE_CHAIN}' ELSE ?3 END"
INSERT_LINKED_AUDIT = (
    "INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest, chain, seq, hash)"  # noqa: S608 - our own text
    f" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {_CHAIN_OF_EVENT},"
    f" COALESCE((SELECT seq FROM audit WHERE chain = {_CHAIN_OF_EVENT}"
    " ORDER BY seq DESC LIMIT 1), 0) + 1,"
    f" audit_link(COALESCE((SELECT hash FROM audit WHERE chain = {_CHAIN_OF_EVENT}"
    f" ORDER BY seq DESC LIMIT 1), audit_genesis({_CHAIN_OF_EVENT})), ?7))"
)
# SQLite: each chain with rows added since the heads were last brought up to date moves
# to its newest (ids only grow: AUTOINCREMENT), then the mark moves past them; one
# transaction, which no writer of events shares.
REFRESH_HEADS = (
    "INSERT INTO audit_heads (chain, seq, hash) SELECT chain, MAX(seq), hash FROM audit"
    " WHERE id > (SELECT through FROM audit_heads_refreshed) AND chain IS NOT NULL"
    " GROUP BY chain ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
    "UPDATE audit_heads_refreshed SET through = COALESCE((SELECT MAX(id) FROM audit), through)",
)

PAGE = 1000
# A checkpoint lists every chain that moved in its interval: a few at a time.
_CHECKPOINT_PAGE = 10
_CHAIN_PAGE = 200
_MARK_CHUNK = 200

_LAST_CHECKPOINT = "SELECT seq, body FROM audit_checkpoints ORDER BY seq DESC LIMIT 1"
_UNSIGNED = "SELECT chain, seq, hash FROM audit_heads WHERE seq > signed ORDER BY chain"
_INSERT_CHECKPOINT = (
    "INSERT INTO audit_checkpoints (seq, at, body) VALUES (?, ?, ?) ON CONFLICT (seq) DO NOTHING"
)
_CHECKPOINTS = (
    "SELECT body FROM audit_checkpoints WHERE seq > ? AND at >= ? AND at < ? ORDER BY seq LIMIT ?"
)
_EVENT_COLUMNS = (
    "chain, seq, at, kind, run_id, interrupt_id, actor, detail, digest, hash, purged_at"
)
# Keyset pages in the chains' order: a page costs what the first one does. ``chain IS NOT
# NULL`` is what every row there has; it lets SQLite's planner read its chain index, which
# holds the linked rows only (migration 17).
_EVENTS = (
    f"SELECT {_EVENT_COLUMNS} FROM audit WHERE chain IS NOT NULL AND (chain, seq) > (?, ?)"  # noqa: S608 - our own text
    " ORDER BY chain, seq LIMIT ?"
)
_EVENTS_OF = (
    f"SELECT {_EVENT_COLUMNS} FROM audit WHERE chain {{in_list}} AND (chain, seq) > (?, ?)"  # noqa: S608 - our own text
    " ORDER BY chain, seq LIMIT ?"
)
# The chains with an event in the window, a page at a time (each probe is one chain's rows).
_CHAINS_IN = (
    "SELECT chain FROM audit_heads AS h WHERE chain > ? AND EXISTS (SELECT 1 FROM audit AS a"
    " WHERE a.chain = h.chain AND a.at >= ? AND a.at < ?) ORDER BY chain LIMIT ?"
)
_RUN_OF = "SELECT run_id FROM pauses WHERE interrupt_id = ?"
_NEVER = 1e300  # beyond every time the bridge writes


def carried(rows: Sequence[Sequence[Any]], linker: Linker) -> list[tuple[str, str, int, str, int]]:
    """Old rows (``AUDIT_CARRY``'s), linked in order: ``(digest, chain, seq, hash, id)``."""
    linked = []
    # By position: a migration may run on a connection without named rows.
    for row_id, at, kind, run_id, interrupt_id, actor, detail in rows:
        opened = audit_detail(
            {"detail": detail, "interrupt_id": interrupt_id, "kind": kind, "at": at}
        )
        digest = event_digest(at, kind, interrupt_id, actor, opened)
        chain = chain_of(run_id)
        seq, hashed = linker.next(chain, digest)
        linked.append((digest, chain, seq, hashed, row_id))
    return linked


def event_line(row: Row) -> dict[str, Any]:
    if row["purged_at"] is not None:
        # Its content is gone (retention); its digest and hash still hold its place.
        return {**_event_line(row), "detail": None, "purged": True}
    return _event_line(row)


def _event_line(row: Row) -> dict[str, Any]:
    return {
        "type": "event",
        "chain": row["chain"],
        "seq": row["seq"],
        "at": row["at"],
        "kind": row["kind"],
        "run_id": row["run_id"],
        "interrupt_id": row["interrupt_id"],
        "actor": row["actor"],
        "detail": audit_detail(row),
        "digest": row["digest"],
        "hash": row["hash"],
    }


class SqlAuditChain:
    """Signs checkpoints and exports the chains; ``bot.audit`` verifies what comes out."""

    def __init__(self, db: Statements) -> None:
        self._db = db
        self._events_of = _EVENTS_OF.format(in_list=db.dialect.in_list)
        self._mark = (
            "UPDATE audit_heads SET signed = {greatest}(signed, CASE chain {cases} END)"
            " WHERE chain {in_list}"
        )

    async def _refresh_heads(self) -> None:
        if self._db.dialect.links_audit:
            await self._db.in_order([(sql, ()) for sql in REFRESH_HEADS])

    async def checkpoint(self, key: CheckpointKey, *, at: float) -> dict[str, Any] | None:
        """Sign the heads that moved; None if another process wrote this number first."""
        await self._refresh_heads()
        last = await self._db.rows(_LAST_CHECKPOINT)
        seq, prev = 1, ""
        if last:
            seq, prev = last[0]["seq"] + 1, checkpoint_hash(json.loads(last[0]["body"]))
        heads = [(r["chain"], r["seq"], r["hash"]) for r in await self._db.many_rows(_UNSIGNED)]
        body = sign_checkpoint(key, seq=seq, at=at, prev=prev, heads=heads)
        statements: list[tuple[str, tuple[Any, ...]]] = [
            (_INSERT_CHECKPOINT, (seq, at, canonical(body).decode()))
        ]
        for start in range(0, len(heads), _MARK_CHUNK):
            statements.append(self._marks(heads[start : start + _MARK_CHUNK]))
        return body if await self._db.in_order(statements) else None

    def _marks(self, heads: Sequence[tuple[str, int, str]]) -> tuple[str, tuple[Any, ...]]:
        dialect = self._db.dialect
        cases = " ".join("WHEN ? THEN CAST(? AS INTEGER)" for _ in heads)
        sql = self._mark.format(greatest=dialect.greatest, cases=cases, in_list=dialect.in_list)
        params = [value for chain, seq, _ in heads for value in (chain, seq)]
        return sql, (*params, dialect.list_value([chain for chain, _, _ in heads]))

    async def export(
        self,
        *,
        since: float | None = None,
        until: float | None = None,
        question: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """The checkpoints (of the window), then whole chains in order: those with an event in
        the window, or the chain of ``question`` (a question's or a run's id), or all."""
        low, high = since if since is not None else -_NEVER, until if until is not None else _NEVER
        after = 0
        while rows := await self._db.rows(_CHECKPOINTS, after, low, high, _CHECKPOINT_PAGE):
            for row in rows:
                line = json.loads(row["body"])
                after = line["seq"]
                yield line
        if question is not None:
            found = await self._db.rows(_RUN_OF, question)
            async for line in self._events([chain_of(found[0]["run_id"] if found else question)]):
                yield line
        elif since is None and until is None:
            async for line in self._events(None):
                yield line
        else:
            await self._refresh_heads()  # the chains are listed by their heads
            chain = ""
            while rows := await self._db.rows(_CHAINS_IN, chain, low, high, _CHAIN_PAGE):
                chains = [row["chain"] for row in rows]
                chain = chains[-1]
                async for line in self._events(chains):
                    yield line

    async def _events(self, chains: list[str] | None) -> AsyncIterator[dict[str, Any]]:
        chain, seq = "", 0
        while True:
            if chains is None:
                rows = await self._db.rows(_EVENTS, chain, seq, PAGE)
            else:
                ids = self._db.dialect.list_value(chains)
                rows = await self._db.rows(self._events_of, ids, chain, seq, PAGE)
            for row in rows:
                yield event_line(row)
            if len(rows) < PAGE:
                return
            chain, seq = rows[-1]["chain"], rows[-1]["seq"]
