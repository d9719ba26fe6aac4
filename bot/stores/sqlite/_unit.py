"""The unit of work on SQLite: one ``Write`` as one BEGIN IMMEDIATE transaction.

The write lock is taken first, so a guard read inside the transaction
stays true until COMMIT: of two writes closing one question, the second
finds it closed and writes nothing.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any, assert_never

from bot.questions.records import DeliveryState, Question, RunRecord
from bot.questions.write import (
    Attempted,
    Ballot,
    Close,
    Decide,
    Expiry,
    Marks,
    NewExpiry,
    Nudge,
    Owed,
    Posted,
    StillOpen,
    Tallied,
    Voted,
    Write,
    Written,
)
from bot.stores import _rows
from bot.stores._rows import OUTSTANDING, PENDING
from bot.stores._shared import (
    COUNT_ATTEMPT,
    INSERT_ATTEMPT,
    INSERT_ONCE_KEY,
    INSERT_RUN,
    PRUNE_ONCE_KEYS,
    RUNS_IN_CONVERSATION,
    TRIM_ATTEMPTS,
    pauses_query,
)
from bot.stores._sql import CHECKPOINT_STATE, JOURNAL_STEPS, SQLITE
from bot.stores.sqlite._db import Database, transaction

_RETURNING = f" RETURNING {', '.join(_rows.PAUSE_COLUMNS)}"

_INSERT_QUESTION = (
    f"INSERT INTO pauses ({', '.join(_rows.INSERT_PAUSE_COLUMNS)})"  # noqa: S608 - our own identifiers
    f" VALUES ({', '.join('?' for _ in _rows.INSERT_PAUSE_COLUMNS)})"
    " ON CONFLICT (interrupt_id) DO NOTHING"
)
# The close's guard on the expiry (``Close.expiry``): none, overdue, or not yet overdue.
_CLOSE = (
    "UPDATE pauses SET status = ?, answer = ?, closed_by = ?, closed_by_id = ?,"  # noqa: S608 - our own identifiers
    " closed_at = ?, tally = COALESCE(?, tally) WHERE interrupt_id = ? AND status = ?"
    f" AND (? <> '{Expiry.OVERDUE}' OR expires_at <= ?)"
    f" AND (? <> '{Expiry.UNEXPIRED}' OR expires_at > ?){_RETURNING}"
)
_EXTEND = f"UPDATE pauses SET expires_at = ? WHERE interrupt_id = ? AND status = ?{_RETURNING}"  # noqa: S608 - our own identifiers
_STILL_OPEN = (
    f"SELECT {', '.join(_rows.PAUSE_COLUMNS)} FROM pauses"  # noqa: S608 - our own identifiers
    " WHERE interrupt_id = ? AND status = ?"
)
_TALLY = f"UPDATE pauses SET tally = ? WHERE interrupt_id = ? AND status = ?{_RETURNING}"  # noqa: S608 - our own identifiers
_POSTED = f"UPDATE pauses SET message_ref = ? WHERE interrupt_id = ?{_RETURNING}"  # noqa: S608 - our own identifiers
_ATTEMPTS = "SELECT attempt_json FROM cross_scope_attempts WHERE interrupt_id = ? ORDER BY seq"
_GET = (
    f"SELECT {', '.join(_rows.PAUSE_COLUMNS)}, EXISTS (SELECT 1 FROM cross_scope_attempts AS a"  # noqa: S608 - our own identifiers
    " WHERE a.interrupt_id = pauses.interrupt_id) AS attempted FROM pauses WHERE interrupt_id = ?"
)
_GET_WITH_ATTEMPTS = pauses_query("WHERE p.interrupt_id = ?", "p.seq")
_EARLIER = RUNS_IN_CONVERSATION.format(key_is_text=SQLITE.key_is_text)
# A flag per optional field, so one statement text serves every step.
_MOVE_RUN = (
    "UPDATE runs SET status = COALESCE(?, status), updated_at = ?,"
    " lease_owner = CASE WHEN ? THEN ? ELSE lease_owner END,"
    " lease_until = CASE WHEN ? THEN ? ELSE lease_until END,"
    " final_text = COALESCE(?, final_text)"
    " WHERE run_id = ? AND (? IS NULL OR status = ?)"
)
_MARK_RESUMED = (
    "UPDATE pauses SET resumed_at = ? WHERE run_id = ? AND status <> ? AND resumed_at IS NULL"
)
_SAVE_CHECKPOINT = (
    "INSERT INTO checkpoints (checkpoint_id, run_id, version, state, created_at)"
    " SELECT ?, ?, COALESCE(MAX(version), 0) + 1, ?, ? FROM checkpoints WHERE run_id = ?"
)
_JOURNAL = (
    "INSERT INTO journal (run_id, step, value, at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (run_id, step) DO NOTHING"
)
# Read before the rows are added, so every pending row it lists is older.
_HOLDER = (
    "SELECT surface, (SELECT group_concat(id) FROM outbox WHERE run_id = runs.run_id"
    " AND state = ?) FROM runs WHERE run_id = ?"
)
_INSERT_API = (
    f"INSERT INTO api_questions ({', '.join(_rows.API_COLUMNS)})"  # noqa: S608 - our own identifiers
    f" VALUES ({', '.join('?' for _ in _rows.API_COLUMNS)}) ON CONFLICT DO NOTHING"
)
# ``Owe.only_with_callback``: the question names a callback.
_HOOKED = "SELECT 1 FROM api_questions WHERE interrupt_id = ? AND callback_url IS NOT NULL"
_OWE = (
    "INSERT INTO outbox (run_id, surface, kind, interrupt_id, body, created_at, state,"
    " attempts, next_at, claimed_until, claimed_by, last_error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, '')"
)


# A quorum's votes (``vote``): one per (question, voter), the tally kept on the question.
# A voter's ballot, written over their earlier one (the lifecycle decided it may be).
_CAST_VOTE = (
    "INSERT INTO votes (interrupt_id, voter, display, decision, answer, at)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (interrupt_id, voter) DO UPDATE SET"
    " display = excluded.display, decision = excluded.decision, answer = excluded.answer,"
    " at = excluded.at"
)
_VOTES = (
    "SELECT voter, display, decision, answer, at FROM votes WHERE interrupt_id = ?"
    " ORDER BY at, voter"
)
# A reminder or an escalation step, counted once however many sweepers race.
_NUDGE = (
    "UPDATE pauses SET reminders = ?, level = ?, nudge_due_at = ?"  # noqa: S608 - our own identifiers
    " WHERE interrupt_id = ? AND status = ?"
    f" AND reminders = ? AND level = ?{_RETURNING}"
)


# A deliverer's pass (``Marks``): the rows done, then each post's message reference, on
# its question as its first route's, or in its place among the further posts.
_MARK = "UPDATE outbox SET state = ?, done_at = ? WHERE id = ?"
_POSTED_FIRST = (
    "UPDATE pauses SET message_ref = ? WHERE interrupt_id ="
    " (SELECT interrupt_id FROM outbox WHERE id = ?)"
)
_POSTED_FURTHER = (
    "UPDATE pauses SET posts = json_set(posts, '$[' || ? || '].message_ref', json(?))"
    " WHERE interrupt_id = (SELECT interrupt_id FROM outbox WHERE id = ?)"
)
_DONE = str(DeliveryState.DONE)


class _Refused(Exception):
    """A guard failed inside the transaction, which then rolls back."""


def _attempts(conn: sqlite3.Connection, interrupt_id: str) -> list[Any]:
    return [_rows.load(text) for (text,) in conn.execute(_ATTEMPTS, (interrupt_id,))]


def _question(conn: sqlite3.Connection, write: Write, texts: dict[str, Any]) -> Question | None:
    """Apply the question's change; the row as it now stands. Raises _Refused if a guard failed."""
    change = write.question
    match change:
        case None:
            return None
        case Question():
            if not conn.execute(_INSERT_QUESTION, texts["question"]).rowcount:
                raise _Refused
            if change.cross_scope_attempts:
                now = time.time()
                conn.executemany(
                    INSERT_ATTEMPT,
                    [
                        (change.interrupt_id, _rows.dump(a.to_json()), now)
                        for a in change.cross_scope_attempts
                    ],
                )
            return change
        case Close():
            expiry = str(change.expiry)
            params = (
                str(change.status),
                _rows.answer_text(change.interrupt_id, change.answer),
                change.by,
                change.by_id,
                change.at,
                _rows.dump(change.tally.stored() if change.tally is not None else None),
                change.interrupt_id,
                OUTSTANDING,
                expiry,
                change.at,
                expiry,
                change.at,
            )
            row = conn.execute(_CLOSE, params).fetchone()
        case NewExpiry():
            params2 = (change.expires_at, change.interrupt_id, OUTSTANDING)
            row = conn.execute(_EXTEND, params2).fetchone()
        case StillOpen():
            row = conn.execute(_STILL_OPEN, (change.interrupt_id, OUTSTANDING)).fetchone()
        case Nudge():
            nudged = (*change.now, change.due_at, change.interrupt_id, OUTSTANDING, *change.was)
            row = conn.execute(_NUDGE, nudged).fetchone()
        case Tallied():
            tallied = (_rows.dump(change.tally.stored()), change.interrupt_id, OUTSTANDING)
            row = conn.execute(_TALLY, tallied).fetchone()
        case Posted():
            posted = (_rows.dump(dict(change.ref)), change.interrupt_id)
            row = conn.execute(_POSTED, posted).fetchone()
        case Attempted():
            # Counting first takes the row (and, here, the write lock is held already).
            row = conn.execute(COUNT_ATTEMPT + _RETURNING, (change.interrupt_id,)).fetchone()
            if row is not None:
                attempt = (change.interrupt_id, _rows.dump(change.attempt.to_json()), time.time())
                conn.execute(INSERT_ATTEMPT, attempt)
                trim = (change.interrupt_id, change.interrupt_id, change.keep)
                conn.execute(TRIM_ATTEMPTS, trim)
        case _:
            assert_never(change)
    if row is None:
        raise _Refused
    return _rows.pause_from_row(row, _attempts(conn, change.interrupt_id))


def _once(conn: sqlite3.Connection, write: Write) -> None:
    """Record the command's key, or refuse the whole write: the command ran already."""
    once = write.once_key
    assert once is not None  # only a keyed write comes here
    conn.execute(PRUNE_ONCE_KEYS, (write.at,))
    if not conn.execute(INSERT_ONCE_KEY, (once.key, write.at, once.until)).rowcount:
        raise _Refused


def _apply(
    conn: sqlite3.Connection, write: Write, texts: dict[str, Any], audit_insert: str
) -> Written:
    if write.once_key is not None:
        _once(conn, write)
    if write.new_run is not None and not conn.execute(INSERT_RUN, texts["run"]).rowcount:
        raise _Refused  # a retried event: the run exists
    question = _question(conn, write, texts)
    if write.api is not None and not conn.execute(_INSERT_API, texts["api"]).rowcount:
        raise _Refused  # the same idempotency key, raced: the first one stands
    run_id = write.run_id or (question.run_id if question is not None else "")
    move = write.run
    if move is not None:
        lease = move.lease
        status = None if move.status is None else str(move.status)
        only_if = None if move.only_if is None else str(move.only_if)
        moved = conn.execute(
            _MOVE_RUN,
            (
                status,
                move.at,
                lease is not None,
                lease[0] if lease else "",
                lease is not None,
                lease[1] if lease else None,
                move.final_text,
                move.run_id or run_id,
                only_if,
                only_if,
            ),
        ).rowcount
        if not moved and move.required:
            raise _Refused
        if move.resumed:
            conn.execute(_MARK_RESUMED, (move.at, run_id, OUTSTANDING))
    checkpoint = write.checkpoint
    if checkpoint is not None:
        conn.execute(
            _SAVE_CHECKPOINT,
            (checkpoint.checkpoint_id, run_id, texts["checkpoint"], time.time(), run_id),
        )
    if write.journal:
        now = time.time()
        conn.executemany(
            _JOURNAL, [(run_id, step, texts[f"journal:{step}"], now) for step in write.journal]
        )
    if write.audit:
        conn.executemany(
            audit_insert,
            [_rows.audit_params(event, run_id=run_id) for event in write.audit],
        )
    turn = None
    if isinstance(write.question, Close) and write.question.with_turn and question is not None:
        state = conn.execute(CHECKPOINT_STATE, (question.checkpoint_id,)).fetchone()
        journal = conn.execute(JOURNAL_STEPS, (run_id,)).fetchall()
        turn = _rows.paused_turn(
            question.checkpoint_id, None if state is None else state[0], journal
        )
    earlier: tuple[RunRecord, ...] = ()
    if write.new_run is not None and write.history:
        # Read after the insert, so the started run may be among them.
        surface, key = write.new_run.surface, texts["run"][-1]  # the key is last
        rows = conn.execute(_EARLIER, (surface, key, write.history)).fetchall()
        earlier = tuple(_rows.run_from_row(row) for row in rows)[::-1]
    return Written(question, _owe(conn, write, run_id, question), turn, earlier)


def _owe(
    conn: sqlite3.Connection, write: Write, run_id: str, question: Question | None
) -> tuple[Owed, ...]:
    if not write.owe:
        return ()
    holder = conn.execute(_HOLDER, (PENDING, run_id)).fetchone()
    if holder is None:
        return ()  # a question of no known run (tests): nobody to post to
    surface, pending = holder
    held_by, held_until = _rows.held(write)
    written: list[tuple[int, int]] = []
    at = write.at
    for index, owe in enumerate(write.owe):
        if owe.only_with_callback and not conn.execute(_HOOKED, (owe.interrupt_id,)).fetchone():
            continue
        params = (
            run_id,
            owe.surface or surface,
            str(owe.kind),
            owe.interrupt_id,
            _rows.body_text(owe),
            at,
            PENDING,
            at,
        )
        delivery_id = conn.execute(_OWE, (*params, held_until, held_by)).lastrowid
        assert delivery_id is not None  # an INSERT always sets it
        written.append((delivery_id, index))
    earlier = [int(i) for i in pending.split(",")] if pending else []
    return _rows.owed_rows(
        write, question, run_id=run_id, surface=surface, written=written, earlier=earlier
    )


def _mark(conn: sqlite3.Connection, marks: Marks, write: Write, audit_insert: str) -> Written:
    conn.executemany(_MARK, [(_DONE, d.at, d.delivery_id) for d in marks.done])
    # The posts' ``posted`` events, linked into their runs' chains with the marks.
    conn.executemany(audit_insert, [_rows.audit_params(event) for event in write.audit])
    first = [(_rows.dump(dict(p.ref)), p.delivery_id) for p in marks.posted if p.post is None]
    further = [
        (p.post, _rows.dump(dict(p.ref)), p.delivery_id) for p in marks.posted if p.post is not None
    ]
    conn.executemany(_POSTED_FIRST, first)
    conn.executemany(_POSTED_FURTHER, further)
    return Written()


@dataclass  # tests patch methods on the instance
class SqliteUnit:
    """Applies a lifecycle step's ``Write`` in one transaction."""

    db: Database

    async def apply(self, write: Write) -> Written | None:
        texts = _rows.write_texts(write)

        marks = write.marks
        audit_insert = self.db.audit_insert

        def apply(conn: sqlite3.Connection) -> Written | None:
            try:
                with transaction(conn):
                    if marks is not None:
                        return _mark(conn, marks, write, audit_insert)
                    return _apply(conn, write, texts, audit_insert)
            except _Refused:
                return None

        return await self.db.run(apply)

    async def vote(self, ballot: Ballot, decide: Decide) -> Voted:
        """The ballot under BEGIN IMMEDIATE: every vote of the question is serialized."""
        key = ballot.interrupt_id

        def vote(conn: sqlite3.Connection) -> Voted:
            try:
                with transaction(conn):
                    row = conn.execute(_STILL_OPEN, (key, OUTSTANDING)).fetchone()
                    if row is None:
                        return Voted(None)
                    before = tuple(
                        Ballot(key, r[0], r[1], r[2], _rows.vote_answer(key, r[0], r[3]), r[4])
                        for r in conn.execute(_VOTES, (key,))
                    )
                    write = decide(_rows.pause_from_row(row, []), before)
                    if write is None:
                        return Voted(None, again=True)
                    cast = (
                        key,
                        ballot.voter,
                        ballot.display,
                        ballot.decision,
                        _rows.vote_text(key, ballot.voter, ballot.answer),
                        ballot.at,
                    )
                    conn.execute(_CAST_VOTE, cast)
                    texts = _rows.write_texts(write)
                    return Voted(_apply(conn, write, texts, self.db.audit_insert))
            except _Refused:
                return Voted(None)

        return await self.db.run(vote)

    async def question(self, interrupt_id: str) -> Question | None:
        def get(conn: sqlite3.Connection) -> Question | None:
            row = conn.execute(_GET, (interrupt_id,)).fetchone()
            if row is None or not row["attempted"]:
                # Most rows have no cross-scope attempts: the row alone is the record.
                return None if row is None else _rows.pause_from_row(row, [])
            rows = _rows.pauses_from_rows(conn.execute(_GET_WITH_ATTEMPTS, (interrupt_id, -1)))
            return rows[0] if rows else None

        return await self.db.run(get)
