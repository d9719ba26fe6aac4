"""Retention: closed questions' content purged, their outcome and their audit's chain kept.

A purge keeps a question's ids, status, times, route and who decided (and
the decision's tally); it empties what was asked and answered: the payload,
the answer, each vote's answer, cross-scope attempts, the bodies of its
deliveries, an API question's metadata and the detail of its audit events.
Once none of a run's questions is open and the run has ended, the run's
turn state (checkpoints), its journal, its text and the detail of its own
audit events go too. An audit event keeps its digest and hash, so every
chain still verifies: the chain covers the hash of the content, not the
content (docs/audit.md).
"""

from __future__ import annotations

from typing import Any

from bot.questions.records import RunStatus
from bot.stores._rows import OUTSTANDING, PENDING
from bot.stores._sql import Statements

PURGE_BATCH = 200
_ENDED = (str(RunStatus.COMPLETED), str(RunStatus.FAILED), str(RunStatus.REMOTE))

# Oldest closed first, so a purge cut short resumes where it stopped.
_DUE = (
    "SELECT interrupt_id, run_id FROM pauses WHERE status <> ? AND purged_at IS NULL"
    " AND closed_at IS NOT NULL AND closed_at < ? ORDER BY closed_at LIMIT ?"
)
_QUESTIONS = (
    "UPDATE pauses SET purged_at = ?, payload = '{{}}',"
    " answer = CASE WHEN answer IS NULL THEN NULL ELSE '{{}}' END"
    " WHERE interrupt_id {in_list} AND purged_at IS NULL"
)
_VOTES = "UPDATE votes SET answer = '{{}}' WHERE interrupt_id {in_list}"
_ATTEMPTS = "DELETE FROM cross_scope_attempts WHERE interrupt_id {in_list}"
_DELIVERIES = (
    f"UPDATE outbox SET body = '{{{{}}}}' WHERE interrupt_id {{in_list}} AND state <> '{PENDING}'"  # noqa: S608 - our own text
)
_API = "UPDATE api_questions SET metadata = NULL WHERE interrupt_id {in_list}"
_AUDIT = (
    "UPDATE audit SET detail = '{{}}', purged_at = ?"
    " WHERE interrupt_id {in_list} AND purged_at IS NULL"
)
# The runs among them that ended with nothing left open.
_ENDED_RUNS = (
    "SELECT run_id FROM runs WHERE run_id {in_list} AND status IN ("  # noqa: S608 - our own text
    + ", ".join(f"'{status}'" for status in _ENDED)
    + ") AND NOT EXISTS (SELECT 1 FROM pauses AS p WHERE p.run_id = runs.run_id"
    + f" AND p.status = '{OUTSTANDING}')"
)
_RUN_TEXT = "UPDATE runs SET text = '', final_text = '' WHERE run_id {in_list}"
# Its outcome's post too, once delivered (a row still owed is a person's to read first).
_RUN_DELIVERIES = (
    f"UPDATE outbox SET body = '{{{{}}}}' WHERE run_id {{in_list}} AND state <> '{PENDING}'"  # noqa: S608 - our own text
)
_RUN_CHECKPOINTS = "DELETE FROM checkpoints WHERE run_id {in_list}"
_RUN_JOURNAL = "DELETE FROM journal WHERE run_id {in_list}"
# A run's events are its chain's (the chain index finds them).
_RUN_AUDIT = (
    "UPDATE audit SET detail = '{{}}', purged_at = ? WHERE chain {in_list} AND purged_at IS NULL"
)


class SqlRetention:
    """Purges in batches, each in one transaction; a sweep or ``admin purge`` calls it."""

    def __init__(self, db: Statements) -> None:
        self._db = db
        in_list = db.dialect.in_list
        self._sql = {
            name: text.format(in_list=in_list)
            for name, text in {
                "questions": _QUESTIONS,
                "votes": _VOTES,
                "attempts": _ATTEMPTS,
                "deliveries": _DELIVERIES,
                "api": _API,
                "audit": _AUDIT,
                "ended": _ENDED_RUNS,
                "run_text": _RUN_TEXT,
                "run_deliveries": _RUN_DELIVERIES,
                "run_checkpoints": _RUN_CHECKPOINTS,
                "run_journal": _RUN_JOURNAL,
                "run_audit": _RUN_AUDIT,
            }.items()
        }

    async def purge(self, before: float, *, at: float, limit: int = PURGE_BATCH) -> int:
        """Purge up to ``limit`` questions closed before ``before``; how many were."""
        due = await self._db.rows(_DUE, OUTSTANDING, before, limit)
        if not due:
            return 0
        sql, ids = self._sql, self._db.dialect.list_value([row["interrupt_id"] for row in due])
        runs = self._db.dialect.list_value(sorted({row["run_id"] for row in due}))
        ended = self._db.dialect.list_value(
            [row["run_id"] for row in await self._db.rows(sql["ended"], runs)]
        )
        statements: list[tuple[str, tuple[Any, ...]]] = [
            (sql["questions"], (at, ids)),
            (sql["votes"], (ids,)),
            (sql["attempts"], (ids,)),
            (sql["deliveries"], (ids,)),
            (sql["api"], (ids,)),
            (sql["audit"], (at, ids)),
            (sql["run_text"], (ended,)),
            (sql["run_deliveries"], (ended,)),
            (sql["run_checkpoints"], (ended,)),
            (sql["run_journal"], (ended,)),
            (sql["run_audit"], (at, ended)),
        ]
        # Another process purging the same batch first: this one changes nothing.
        return len(due) if await self._db.in_order(statements) else 0

    async def purge_all(self, before: float, *, at: float) -> int:
        """Every question closed before ``before``, a batch at a time; how many."""
        total = 0
        while purged := await self.purge(before, at=at):
            total += purged
        return total
