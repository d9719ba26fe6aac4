"""The unit of work on PostgreSQL: one ``Write`` as one statement.

A statement outside an explicit transaction is its own transaction, so a
step costs one round trip: no BEGIN, no COMMIT. Every part of the write is
a data-modifying CTE that hangs off ``go``, the guard: the question's
conditional change (or the run's, for an ending), which PostgreSQL
re-checks against the row's latest version once a competing writer commits
(READ COMMITTED). Of two racing closes of one question exactly one matches;
the other statement writes nothing at all.

The text depends only on the write's shape (which parts it has), so each
shape is one prepared statement in asyncpg's cache.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from bot.questions.records import AuditEvent, DeliveryState, Question, RunRecord
from bot.questions.write import (
    Attempted,
    Ballot,
    Close,
    Decide,
    Expiry,
    Marks,
    NewExpiry,
    Nudge,
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
    RUN_WRITE_COLUMNS,
    RUNS_IN_CONVERSATION,
    TRIM_ATTEMPTS,
    pauses_query,
)
from bot.stores._sql import POSTGRES, numbered
from bot.stores.postgres._changes import notice
from bot.stores.postgres._db import Conn, Database

_GET = numbered(pauses_query("WHERE p.interrupt_id = ?", "p.seq"))
# A bounded few expired keys per keyed write, skipping any another write holds:
# clicks keyed at once never wait on each other's prune, nor deadlock with a close.
_PRUNE_ONCE = (
    "DELETE FROM once_keys WHERE key IN (SELECT key FROM once_keys WHERE expires_at <= $1"
    " ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED)"
)
_ONCE = numbered(INSERT_ONCE_KEY)
_EARLIER = RUNS_IN_CONVERSATION.format(key_is_text=POSTGRES.key_is_text)


# A quorum's votes (``vote``): the question row locked first, so votes queue per question.
_LOCK_OPEN = f"SELECT * FROM pauses WHERE interrupt_id = $1 AND status = '{OUTSTANDING}' FOR UPDATE"  # noqa: S608 - our own text
# A voter's ballot, written over their earlier one (the lifecycle decided it may be).
_CAST_VOTE = (
    "INSERT INTO votes (interrupt_id, voter, display, decision, answer, at)"
    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (interrupt_id, voter) DO UPDATE SET"
    " display = excluded.display, decision = excluded.decision, answer = excluded.answer,"
    " at = excluded.at"
)
_VOTES = (
    "SELECT voter, display, decision, answer, at FROM votes WHERE interrupt_id = $1"
    " ORDER BY at, voter"
)
# The changes the change feed does not announce (no run changed its course), each a
# few statements of its own: where a question stands posted, and a cross-scope attempt.
_POSTED = "UPDATE pauses SET message_ref = $1 WHERE interrupt_id = $2 RETURNING *"
_COUNT_ATTEMPT = numbered(COUNT_ATTEMPT) + " RETURNING *"
_INSERT_ATTEMPT = numbered(INSERT_ATTEMPT)
_TRIM_ATTEMPTS = numbered(TRIM_ATTEMPTS)
_ATTEMPTS = "SELECT attempt_json FROM cross_scope_attempts WHERE interrupt_id = $1 ORDER BY seq"


# A deliverer's pass (``Marks``), one statement, the simplest its marks allow: each is
# planned once and kept (``Database.bookkeep``), and the pass that follows a
# close's edit or an outcome's post, the commonest, leaves no reference at all.
# The rows done, and nothing else; the others start from it, as their ``done``:
_MARK_DONE = """
UPDATE outbox SET state = $1, done_at = m.at
FROM unnest($2::bigint[], $3::float8[]) AS m(id, at) WHERE outbox.id = m.id
"""
_DONE_ROWS = f"WITH done AS ({_MARK_DONE} RETURNING outbox.id, outbox.interrupt_id)"
# The rows done, and the references of first-route posts (a question's latest wins):
_MARK_FIRST_POSTS = f"""{_DONE_ROWS}, latest AS (
    SELECT DISTINCT ON (done.interrupt_id) done.interrupt_id, r.ref
    FROM done JOIN unnest($4::bigint[], $5::text[]) AS r(id, ref) ON r.id = done.id
    ORDER BY done.interrupt_id, done.id DESC
)
UPDATE pauses SET message_ref = latest.ref FROM latest
WHERE pauses.interrupt_id = latest.interrupt_id
"""  # noqa: S608 - our own text
# The rows done, then each post's message reference on its question, as its first
# route's or in its place among the further posts:
_MARK = f"""{_DONE_ROWS}, posted AS (
    SELECT done.id, done.interrupt_id, r.ref, r.post
    FROM done JOIN unnest($4::bigint[], $5::text[], $6::int[]) AS r(id, ref, post) ON r.id = done.id
), per AS (
    SELECT interrupt_id,
        (array_agg(ref ORDER BY id DESC) FILTER (WHERE post IS NULL))[1] AS first_ref,
        jsonb_object_agg(post::text, ref::jsonb ORDER BY id) FILTER (WHERE post IS NOT NULL) AS refs
    FROM posted GROUP BY interrupt_id
)
UPDATE pauses SET message_ref = COALESCE(per.first_ref, pauses.message_ref),
    posts = CASE WHEN per.refs IS NULL THEN pauses.posts ELSE (
        SELECT COALESCE(jsonb_agg(CASE WHEN per.refs ? (e.n - 1)::text
            THEN e.p || jsonb_build_object('message_ref', per.refs -> (e.n - 1)::text)
            ELSE e.p END ORDER BY e.n), '[]'::jsonb)::text
        FROM jsonb_array_elements(pauses.posts::jsonb) WITH ORDINALITY AS e(p, n)) END
FROM per WHERE pauses.interrupt_id = per.interrupt_id
"""  # noqa: S608 - our own text
_DONE = str(DeliveryState.DONE)


class _Refused(Exception):
    """A keyed write's guard refused it: its key is rolled back with it."""


class _Params:
    """Positional parameters, numbered as they are added."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any, cast: str = "") -> str:
        self.values.append(value)
        return f"${len(self.values)}{cast}"


def _if_open(interrupt_id: str, sets: str, p: _Params, guard: str = "") -> str:
    """An outstanding question's update (``guard``: what else it requires), its new row."""
    return (
        f"UPDATE pauses SET {sets} WHERE interrupt_id = {p(interrupt_id)}"  # noqa: S608 - our own text
        f" AND status = '{OUTSTANDING}'{guard} RETURNING pauses.*"
    )


def _question_cte(write: Write, p: _Params) -> str | None:
    change = write.question
    match change:
        case None:
            return None
        case Question():
            values = ", ".join(p(v) for v in _rows.pause_insert_params(change))
            return (
                f"INSERT INTO pauses ({', '.join(_rows.INSERT_PAUSE_COLUMNS)}) VALUES ({values})"  # noqa: S608 - our own identifiers
                " ON CONFLICT (interrupt_id) DO NOTHING RETURNING pauses.*"
            )
        case Close():
            at = p(change.at, "::float8")
            answer = p(_rows.answer_text(change.interrupt_id, change.answer), "::text")
            tally = (
                ""
                if change.tally is None
                else f", tally = {p(_rows.dump(change.tally.stored()), '::text')}"
            )
            closed = (
                f"status = {p(str(change.status), '::text')}, answer = {answer},"
                f" closed_by = {p(change.by)}, closed_by_id = {p(change.by_id)}, closed_at = {at}"
            )
            return _if_open(change.interrupt_id, closed + tally, p, _expiry(change.expiry, at))
        case NewExpiry():
            return _if_open(change.interrupt_id, f"expires_at = {p(change.expires_at)}", p)
        case StillOpen():
            return (
                f"SELECT * FROM pauses WHERE interrupt_id = {p(change.interrupt_id)}"  # noqa: S608 - our own text
                f" AND status = '{OUTSTANDING}' FOR UPDATE"
            )
        case Nudge():
            counted = (
                f"reminders = {p(change.now[0])}, level = {p(change.now[1])},"
                f" nudge_due_at = {p(change.due_at, '::float8')}"
            )
            was = f" AND reminders = {p(change.was[0])} AND level = {p(change.was[1])}"
            return _if_open(change.interrupt_id, counted, p, was)
        case Tallied():
            tally = f"tally = {p(_rows.dump(change.tally.stored()), '::text')}"
            return _if_open(change.interrupt_id, tally, p)
        case Posted() | Attempted():
            raise AssertionError("written by _unannounced, never in a statement")
        case _:
            assert_never(change)


def _expiry(expiry: Expiry, at: str) -> str:
    """The close's guard on the question's expiry, as a condition (``at`` its parameter)."""
    match expiry:
        case Expiry.ANY:
            return ""
        case Expiry.OVERDUE:
            return f" AND expires_at <= {at}"
        case Expiry.UNEXPIRED:
            return f" AND expires_at > {at}"
        case _:
            assert_never(expiry)


def _statement(write: Write, texts: dict[str, Any]) -> tuple[str, list[Any]]:
    p = _Params()
    ctes: list[str] = []
    question = _question_cte(write, p)
    if write.new_run is not None:
        values = ", ".join(p(v) for v in texts["run"])
        ctes.append(
            f"started AS (INSERT INTO runs ({', '.join(RUN_WRITE_COLUMNS)}) VALUES ({values})"  # noqa: S608 - our own identifiers
            " ON CONFLICT (run_id) DO NOTHING RETURNING run_id, surface, conversation_key)"
        )
        if write.history:
            # Read in the statement's snapshot: the runs before this one.
            surface, key = write.new_run.surface, texts["run"][-1]  # the key is last
            before = _EARLIER.split("?")
            filled = (p(surface, "::text"), p(key, "::text"), p(write.history, "::int"), "")
            text = "".join(part + value for part, value in zip(before, filled, strict=True))
            ctes.append(f"before_it AS ({text})")
    if write.api is not None:
        values = ", ".join(p(v) for v in texts["api"])
        ctes.append(
            f"api AS (INSERT INTO api_questions ({', '.join(_rows.API_COLUMNS)}) VALUES ({values})"  # noqa: S608 - our own identifiers
            " ON CONFLICT DO NOTHING RETURNING interrupt_id)"
        )
    if question is not None:
        ctes.append(f"q AS ({question})")
        # An API question's id comes from its idempotency key: a raced duplicate
        # conflicts in both inserts, and the guard says so.
        hooked = " WHERE EXISTS (SELECT 1 FROM api)" if write.api is not None else ""
        target = f"SELECT run_id FROM q{hooked}"  # noqa: S608 - our own text
    elif write.new_run is not None:
        target = "SELECT run_id FROM started"
    else:
        target = f"SELECT {p(write.run_id, '::text')} AS run_id"
    asked = write.question
    if isinstance(asked, Question) and asked.cross_scope_attempts:
        attempts = p([_rows.dump(a.to_json()) for a in asked.cross_scope_attempts], "::text[]")
        ctes.append(
            "attempted AS (INSERT INTO cross_scope_attempts (interrupt_id, attempt_json, at)"  # noqa: S608 - our own text
            f" SELECT q.interrupt_id, a.json, {p(time.time(), '::float8')} FROM q,"
            f" unnest({attempts}) WITH ORDINALITY AS a(json, n) ORDER BY a.n)"
        )
    move = write.run
    if move is not None:
        lease = move.lease
        sets = [f"updated_at = {p(move.at, '::float8')}"]
        if move.status is not None:
            sets.append(f"status = {p(str(move.status))}")
        if lease is not None:
            sets += [f"lease_owner = {p(lease[0])}", f"lease_until = {p(lease[1], '::float8')}"]
        if move.final_text is not None:
            sets.append(f"final_text = {p(move.final_text)}")
        only_if = "" if move.only_if is None else f" AND runs.status = '{move.only_if}'"
        ctes.append(
            f"moved AS (UPDATE runs SET {', '.join(sets)} FROM ({target}) AS k"  # noqa: S608 - our own text
            f" WHERE runs.run_id = k.run_id{only_if} RETURNING runs.run_id)"
        )
        if move.required:
            target = "SELECT run_id FROM moved"
    ctes.append(f"go AS ({target})")
    # Only if a part below uses it: PostgreSQL refuses a parameter no text names.
    needs_at = (move is not None and move.resumed) or bool(write.journal) or bool(write.owe)
    at = p(write.at, "::float8") if needs_at else ""
    if move is not None and move.resumed:
        ctes.append(
            f"resumed AS (UPDATE pauses SET resumed_at = {at} FROM go"  # noqa: S608 - our own text
            f" WHERE pauses.run_id = go.run_id AND pauses.status <> '{OUTSTANDING}'"
            " AND pauses.resumed_at IS NULL)"
        )
    checkpoint = write.checkpoint
    if checkpoint is not None:
        ctes.append(
            "saved AS (INSERT INTO checkpoints (checkpoint_id, run_id, version, state, created_at)"  # noqa: S608 - our own text
            f" SELECT {p(checkpoint.checkpoint_id, '::text')}, go.run_id, COALESCE((SELECT"
            " MAX(version) FROM checkpoints AS c WHERE c.run_id = go.run_id), 0) + 1,"
            f" {p(texts['checkpoint'], '::text')}, {p(time.time(), '::float8')} FROM go)"
        )
    if write.journal:
        steps = p(list(write.journal), "::text[]")
        values = p([texts[f"journal:{step}"] for step in write.journal], "::text[]")
        ctes.append(
            "journaled AS (INSERT INTO journal (run_id, step, value, at)"  # noqa: S608 - our own text
            f" SELECT go.run_id, s.step, s.value, {at} FROM go, unnest({steps}, {values})"
            " AS s(step, value) ON CONFLICT (run_id, step) DO NOTHING)"
        )
    if write.audit:
        rows = [_rows.audit_params(event) for event in write.audit]
        columns = [p([row[i] for row in rows], cast) for i, cast in enumerate(_AUDIT_CASTS)]
        ctes.append(
            "audited AS (INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest)"  # noqa: S608 - our own text
            " SELECT a.at, a.kind, COALESCE(NULLIF(a.run_id, ''), go.run_id), a.interrupt_id,"
            f" a.actor, a.detail, a.digest FROM go, unnest({', '.join(columns)})"
            " WITH ORDINALITY AS a(at, kind, run_id, interrupt_id, actor, detail, digest, n)"
            " ORDER BY a.n)"
        )
    # A run this statement starts is not yet visible in ``runs``: read its insert.
    runs = "started" if write.new_run is not None else "runs"
    ctes.append(
        f"run AS (SELECT {runs}.run_id, {runs}.surface, {runs}.conversation_key FROM {runs}"  # noqa: S608 - our own text
        f" JOIN go ON go.run_id = {runs}.run_id)"
    )
    ctes.append(f"told AS ({notice('run')})")
    if write.owe:
        held_by, held_until = _rows.held(write)
        kinds = p([str(o.kind) for o in write.owe], "::text[]")
        ids = p([o.interrupt_id for o in write.owe], "::text[]")
        bodies = p([_rows.body_text(o) for o in write.owe], "::text[]")
        surfaces = p([o.surface for o in write.owe], "::text[]")
        gated = p([o.only_with_callback for o in write.owe], "::bool[]")
        by, until = p(held_by, "::text"), p(held_until, "::float8")
        # The rows owed (``Owe.only_with_callback``: if the question names a callback),
        # read twice (inserted, and which were), so evaluated once.
        ctes.append(
            "owing AS (SELECT run.run_id, COALESCE(NULLIF(o.surface, ''), run.surface) AS surface,"  # noqa: S608 - our own text
            " o.kind, o.interrupt_id, o.body, o.n"
            f" FROM run, unnest({kinds}, {ids}, {bodies}, {surfaces}, {gated}) WITH ORDINALITY"
            " AS o(kind, interrupt_id, body, surface, gated, n)"
            " WHERE NOT o.gated OR EXISTS (SELECT 1 FROM api_questions"
            " AS h WHERE h.interrupt_id = o.interrupt_id AND h.callback_url IS NOT NULL))"
        )
        ctes.append(
            "owed AS (INSERT INTO outbox (run_id, surface, kind, interrupt_id, body, created_at,"  # noqa: S608 - our own text
            " state, attempts, next_at, claimed_until, claimed_by, last_error)"
            f" SELECT w.run_id, w.surface, w.kind, w.interrupt_id, w.body, {at}, '{PENDING}', 0,"
            f" {at}, {until}, {by}, '' FROM owing AS w ORDER BY w.n RETURNING id)"
        )
        owed = "ARRAY(SELECT id FROM owed ORDER BY id)"
        owed_n = "ARRAY(SELECT n FROM owing ORDER BY n)"
    else:
        owed = "ARRAY[]::bigint[]"
        owed_n = "ARRAY[]::bigint[]"
    row = "q.*," if question is not None else ""
    attempts = (
        "ARRAY(SELECT a.attempt_json FROM cross_scope_attempts AS a"
        " WHERE a.interrupt_id = q.interrupt_id ORDER BY a.seq) AS attempts,"
        if question is not None
        else ""
    )
    if isinstance(write.question, Close) and write.question.with_turn:
        # What the closer's resume reads, read here: no round trips of its own.
        attempts += (
            " (SELECT c.state FROM checkpoints AS c WHERE c.checkpoint_id = q.checkpoint_id)"
            " AS turn_state, ARRAY(SELECT ARRAY[j.step, j.value] FROM journal AS j"
            " WHERE j.run_id = q.run_id) AS turn_journal,"
        )
    if write.new_run is not None and write.history:
        attempts += " ARRAY(SELECT row_to_json(b)::text FROM before_it AS b) AS before_it,"
    source = "(SELECT 1) AS one" + (" LEFT JOIN q ON true" if question is not None else "")
    select = (
        f"SELECT (SELECT COUNT(*) FROM go) AS went, {row} {attempts}"  # noqa: S608 - our own text
        f" {owed} AS owed_ids, {owed_n} AS owed_n,"
        " (SELECT surface FROM run) AS owed_surface,"
        " (SELECT COUNT(*) FROM told) AS told,"
        f" ARRAY(SELECT e.id FROM outbox AS e WHERE e.run_id = (SELECT run_id FROM go)"
        f" AND e.state = '{PENDING}' ORDER BY e.id) AS earlier FROM {source}"
    )
    return f"WITH {', '.join(ctes)} {select}", p.values


_AUDIT_CASTS = (
    "::float8[]",
    "::text[]",
    "::text[]",
    "::text[]",
    "::text[]",
    "::text[]",
    "::text[]",
)


async def _once(conn: Conn, write: Write, sql: str, params: list[Any]) -> Any:
    """A command's write with its idempotency key, in one transaction.

    The key's unique insert decides: a second replica inserting the same key
    waits on the first's transaction, then finds the key and writes nothing.
    A keyed write (an admin command, an answer click) costs a BEGIN, the
    prune, the key and the COMMIT beside its statement.
    """
    once = write.once_key
    assert once is not None  # only a keyed write comes here
    await conn.execute(_PRUNE_ONCE, write.at)
    if await conn.fetchval(_ONCE + " RETURNING 1", once.key, write.at, once.until) is None:
        raise _Refused
    row = await conn.fetchrow(sql, *params)
    if row is None or not row["went"]:
        raise _Refused  # the effect was refused: so is the key, for a later try
    return row


async def _unannounced(db: Database, change: Posted | Attempted) -> Written | None:
    """A change of a question that moves no run on: its own statements, announced to no
    change feed (nothing a live page shows has changed its course)."""
    match change:
        case Posted():
            ref = _rows.dump(dict(change.ref))
            row = await db.fetchrow(_POSTED, ref, change.interrupt_id)
            if row is None:
                return None
            attempts = await db.fetch(_ATTEMPTS, change.interrupt_id)
            return Written(_rows.pause_from_row(row, [_rows.load(a[0]) for a in attempts]))
        case Attempted():

            async def attempted(conn: Conn) -> Written | None:
                # Counting first locks the question's row: concurrent attempts queue here.
                row = await conn.fetchrow(_COUNT_ATTEMPT, change.interrupt_id)
                if row is None:
                    return None
                attempt = _rows.dump(change.attempt.to_json())
                await conn.execute(_INSERT_ATTEMPT, change.interrupt_id, attempt, time.time())
                trim = (change.interrupt_id, change.interrupt_id, change.keep)
                await conn.execute(_TRIM_ATTEMPTS, *trim)
                kept = [_rows.load(a[0]) for a in await conn.fetch(_ATTEMPTS, change.interrupt_id)]
                return Written(_rows.pause_from_row(row, kept))

            return await db.transaction(attempted)
        case _:
            assert_never(change)


@dataclass  # tests patch methods on the instance
class PostgresUnit:
    """Applies a lifecycle step's ``Write`` as one statement."""

    db: Database

    async def apply(self, write: Write) -> Written | None:
        marks = write.marks
        if marks is not None:
            # One statement for the pass (with its posts' events), one round trip; its
            # commit waits for no fsync.
            await self.db.bookkeep(*_marking(marks, write.audit))
            return Written()
        if isinstance(write.question, Posted | Attempted):
            return await _unannounced(self.db, write.question)
        sql, params = _statement(write, _rows.write_texts(write))
        if write.once_key is not None:
            try:
                row = await self.db.transaction(lambda conn: _once(conn, write, sql, params))
            except _Refused:
                return None
        else:
            row = await self.db.fetchrow(sql, *params)
        if row is None or not row["went"]:
            return None
        return _written(write, row)

    async def vote(self, ballot: Ballot, decide: Decide) -> Voted:
        """The ballot in one transaction, the question row locked FOR UPDATE first."""
        key = ballot.interrupt_id

        async def vote(conn: Conn) -> Voted:
            locked = await conn.fetchrow(_LOCK_OPEN, key)
            if locked is None:
                return Voted(None)
            before = tuple(
                Ballot(
                    key,
                    r["voter"],
                    r["display"],
                    r["decision"],
                    _rows.vote_answer(key, r["voter"], r["answer"]),
                    r["at"],
                )
                for r in await conn.fetch(_VOTES, key)
            )
            write = decide(_rows.pause_from_row(locked, []), before)
            if write is None:
                return Voted(None, again=True)
            answer = _rows.vote_text(key, ballot.voter, ballot.answer)
            cast = (ballot.voter, ballot.display, ballot.decision, answer, ballot.at)
            await conn.execute(_CAST_VOTE, key, *cast)
            sql, params = _statement(write, _rows.write_texts(write))
            if (
                write.once_key is not None
            ):  # an answer's request, voted once (``_once`` refuses it all)
                return Voted(_written(write, await _once(conn, write, sql, params)))
            row = await conn.fetchrow(sql, *params)
            if row is None or not row["went"]:
                raise _Refused  # rolls the ballot back with it
            return Voted(_written(write, row))

        try:
            return await self.db.transaction(vote)
        except _Refused:
            return Voted(None)

    async def question(self, interrupt_id: str) -> Question | None:
        rows = _rows.pauses_from_rows(await self.db.fetch(_GET, interrupt_id, None))
        return rows[0] if rows else None


def _marking(marks: Marks, audit: Sequence[AuditEvent] = ()) -> tuple[Any, ...]:
    """The statement that writes ``marks`` and the ``audit`` events of its posts, and its
    parameters."""
    done = (_DONE, [d.delivery_id for d in marks.done], [d.at for d in marks.done])
    if not marks.posted:
        assert not audit  # a post's event comes with its reference
        return _MARK_DONE, *done
    ids = [p.delivery_id for p in marks.posted]
    refs = [_rows.dump(dict(p.ref)) for p in marks.posted]
    if all(p.post is None for p in marks.posted):
        sql, params = _MARK_FIRST_POSTS, [*done, ids, refs]
    else:
        sql, params = _MARK, [*done, ids, refs, [p.post for p in marks.posted]]
    if not audit:
        return sql, *params
    # The events, linked into their runs' chains by the audit's trigger, in this statement.
    rows = [_rows.audit_params(event) for event in audit]
    first = len(params) + 1
    columns = ", ".join(f"${first + i}{cast}" for i, cast in enumerate(_AUDIT_CASTS))
    audited = _AUDITED.format(columns=columns)
    sql = sql.replace(_DONE_ROWS, f"{_DONE_ROWS}, {audited}", 1)
    return sql, *params, *([row[i] for row in rows] for i in range(len(_AUDIT_CASTS)))


# A pass's ``posted`` events (``_marking``), in order; each names its run.
_AUDITED = (
    "audited AS (INSERT INTO audit (at, kind, run_id, interrupt_id, actor, detail, digest)"
    " SELECT a.at, a.kind, a.run_id, a.interrupt_id, a.actor, a.detail, a.digest"
    " FROM unnest({columns}) WITH ORDINALITY"
    " AS a(at, kind, run_id, interrupt_id, actor, detail, digest, n) ORDER BY a.n)"
)


def _written(write: Write, row: Any) -> Written:
    """The write's result as the statement's one row reports it."""
    question: Question | None = None
    if isinstance(write.question, Question):
        question = write.question  # as inserted; the statement cannot read its own rows
    elif write.question is not None:
        question = _rows.pause_from_row(row, [_rows.load(a) for a in row["attempts"]])
    run_id = write.run_id or (question.run_id if question is not None else "")
    # ``owed_n``: which of ``write.owe`` (numbered from 1) were written, in order.
    written = ((i, n - 1) for i, n in zip(row["owed_ids"], row["owed_n"], strict=True))
    owed = _rows.owed_rows(
        write,
        question,
        run_id=run_id,
        surface=row["owed_surface"],
        written=written,
        earlier=row["earlier"],
    )
    turn = None
    if isinstance(write.question, Close) and write.question.with_turn and question is not None:
        turn = _rows.paused_turn(question.checkpoint_id, row["turn_state"], row["turn_journal"])
    runs: tuple[RunRecord, ...] = ()
    if write.new_run is not None and write.history:
        newest_first = (_rows.run_from_row(_rows.load(text)) for text in row["before_it"])
        runs = tuple(newest_first)[::-1]
    return Written(question, owed, turn, runs)
