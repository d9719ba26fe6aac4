"""The history of decisions: closed questions, newest first, filtered, a page at a time.

Keyset pages on (closed_at, seq), newest first: the cursor is the last row's
``seq``, so a later page costs what the first does. Every filter is on what
a purge keeps (``_retention``): status, route, who asked, who decided, the
decision and when, so a purged question is still listed, with its outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.contract.answers import Answer, answer_json
from bot.questions.records import Question
from bot.stores import _rows, data_keys
from bot.stores._rows import OUTSTANDING
from bot.stores._shared import pauses_query
from bot.stores._sql import Statements
from bot.stores.ports import Closed, HistoryFilter

_NEWEST = "p.closed_at DESC, p.seq DESC"
_OF_RUN = "EXISTS (SELECT 1 FROM runs AS r WHERE r.run_id = p.run_id AND r.{column} = ?)"
_RUNS = "SELECT run_id, requester, surface FROM runs WHERE run_id {in_list}"
_PURGED = (
    "SELECT interrupt_id, seq FROM pauses WHERE interrupt_id {in_list} AND purged_at IS NOT NULL"
)
_SEQS = "SELECT interrupt_id, seq FROM pauses WHERE interrupt_id {in_list}"
# With sealed answers, the rows read per page while the decision is matched in Python.
_DECIDED_PAGE = 200


class SqlHistory:
    def __init__(self, db: Statements) -> None:
        self._db = db

    async def closed(
        self, where: HistoryFilter, *, after: str | None = None, limit: int = 20
    ) -> list[Closed]:
        if where.decision is not None and data_keys.in_use() is not None:
            # Answers are sealed (``data_keys``): the SQL cannot read their decision.
            return await self._decided(where, after, limit)
        questions = await self._questions(where, after, limit)
        if not questions:
            return []
        return await self._described(questions)

    async def _decided(self, where: HistoryFilter, after: str | None, limit: int) -> list[Closed]:
        """The other filters in SQL, a page at a time, the decision matched on each opened
        answer, until ``limit`` match or the pages end."""
        others, found = replace(where, decision=None), list[Closed]()
        while len(found) < limit:
            questions = await self._questions(others, after, _DECIDED_PAGE)
            if not questions:
                break
            page = await self._described(questions)
            found += [c for c in page if _decision(c.question.answer) == where.decision]
            if len(page) < _DECIDED_PAGE:
                break
            after = page[-1].cursor
        return found[: max(limit, 0)]

    async def _questions(
        self, where: HistoryFilter, after: str | None, limit: int
    ) -> list[Question]:
        dialect = self._db.dialect
        # Each filter set: its test, with a ``?`` for each use of its value.
        filters: list[tuple[str, object]] = [
            ("p.status = ?", where.status),
            ("p.scope = ?", where.scope),
            ("(p.closed_by_id = ? OR p.closed_by = ?)", where.decided_by),
            (f"{dialect.decision} = ?", where.decision),
            ("p.closed_at >= ?", where.since),
            ("p.closed_at < ?", where.until),
            (_OF_RUN.format(column="requester"), where.requester),
            (_OF_RUN.format(column="surface"), where.surface),
        ]
        tests: list[str] = ["p.status <> ?"]
        params: list[object] = [OUTSTANDING]
        for test, value in filters:
            if value is not None:
                tests.append(test)
                params += [value] * test.count("?")
        if after is not None:
            if not (after.isascii() and after.isdigit()):
                raise ValueError("after takes the cursor a page of history printed")
            tests.append(
                "(p.closed_at < (SELECT closed_at FROM pauses WHERE seq = ?) OR"
                " (p.closed_at = (SELECT closed_at FROM pauses WHERE seq = ?) AND p.seq < ?))"
            )
            params += [int(after), int(after), int(after)]
        sql = pauses_query(f"WHERE {' AND '.join(tests)}", _NEWEST)
        return _rows.pauses_from_rows(await self._db.rows(sql, *params, max(limit, 0)))

    async def _described(self, questions: Sequence[Question]) -> list[Closed]:
        dialect = self._db.dialect
        ids = dialect.list_value([q.interrupt_id for q in questions])
        runs_of = dialect.list_value(sorted({q.run_id for q in questions}))
        runs = {
            row["run_id"]: (row["requester"], row["surface"])
            for row in await self._db.rows(_RUNS.format(in_list=dialect.in_list), runs_of)
        }
        purged = {
            row["interrupt_id"]
            for row in await self._db.rows(_PURGED.format(in_list=dialect.in_list), ids)
        }
        seqs = {
            row["interrupt_id"]: str(row["seq"])
            for row in await self._db.rows(_SEQS.format(in_list=dialect.in_list), ids)
        }
        return [
            Closed(
                q,
                *runs.get(q.run_id, ("", "")),
                q.interrupt_id in purged,
                seqs[q.interrupt_id],
            )
            for q in questions
        ]


def _decision(answer: Answer | None) -> object:
    """The answer's ``decision`` as the SQL filter reads it (``_sql``: ``$.decision`` of
    whatever JSON the row holds, a deployment's own answer included), so the sealed rows
    match as plaintext ones do: the one place that reads the stored JSON, not the type."""
    return (answer_json(answer) or {}).get("decision")
