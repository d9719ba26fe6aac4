"""Records <-> rows, for both SQL backends: column lists, parameters, JSON text, mapping.

SQLite and PostgreSQL store exactly the same values, so the parameter
tuples and the row mapping live here once; each backend only writes its own
SQL (placeholders, upserts). A row is anything read by column name:
``Row`` and ``asyncpg.Record`` both are.
"""

from __future__ import annotations

import json
import json.scanner
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, cast

from bot.audit import event_digest, stored_event
from bot.contract.answers import Answer, ApprovalDecision, OtherAnswer, answer_json, answer_of
from bot.contract.json_values import compiled
from bot.contract.payloads import OtherPayload, Payload, payload_json, payload_model, payload_of
from bot.questions import quorum
from bot.questions.records import (
    ApiRequest,
    AuditEvent,
    CrossScopeAttempt,
    DeliveryKind,
    DeliveryState,
    OutboxRow,
    Post,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.questions.write import Owe, Owed, TurnToResume, Write
from bot.stores import data_keys


class Row(Protocol):
    """A result row read by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


# Statuses the SQL compares with, as the plain text the drivers bind.
OUTSTANDING = str(QuestionStatus.OUTSTANDING)
RUNNING = str(RunStatus.RUNNING)
PENDING = str(DeliveryState.PENDING)

# One encoder: json.dumps with separators= builds a new encoder per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_encode = compiled(_ENCODER)


def dump(value: dict[str, Any] | Sequence[Any] | None) -> str | None:
    """JSON text for a dict column; TypeError (before any SQL) if JSON cannot hold it."""
    return None if value is None else _encode(value)


# The standard decoder's scanner: ``json.loads`` also matches whitespace around the
# value with a regular expression each call, which the texts we wrote never have.
_scan = json.scanner.make_scanner(cast(Any, json.JSONDecoder()))


def load(text: str | None) -> Any:
    if text is None:
        return None
    if type(text) is str:
        try:
            value, end = _scan(text, 0)
        except StopIteration:
            pass  # not a value where it starts: ``json.loads`` says why
        else:
            if end == len(text):
                return value
    return json.loads(text)


PAUSE_COLUMNS = (
    "interrupt_id",
    "run_id",
    "scope",
    "name",
    "tool_call_id",
    "checkpoint_id",
    "payload",
    "issued_at",
    "expires_at",
    "root_run_id",
    "session_id",
    "thread_id",
    "status",
    "answer",
    "closed_by",
    "closed_at",
    "resumed_at",
    "message_ref",
    "closed_by_id",
    "cross_scope_count",
    "answerers",
    "policy",
    "tally",
    "level",
    "reminders",
    "posts",
    "trace_parent",
)
API_COLUMNS = (
    "interrupt_id",
    "key_name",
    "idempotency_key",
    "body_hash",
    "kind",
    "created_at",
    "callback_url",
    "metadata",
    "run_ref",
    "key_id",
)
RUN_COLUMNS = (
    "run_id",
    "scope",
    "surface",
    "requester",
    "text",
    "created_at",
    "conversation",
    "status",
    "updated_at",
    "final_text",
    "lease_owner",
    "lease_until",
    "delivery_error",
)


# Columns held as JSON text, and those held as an enum's value; the rest as they are.
_JSON_COLUMNS = frozenset(
    {
        "payload",
        "answer",
        "message_ref",
        "conversation",
        "body",
        "detail",
        "metadata",
        "answerers",
    }
)
# JSON lists read back as the tuples the frozen records hold.
_TUPLE_COLUMNS = frozenset({"answerers"})
_ENUMS: dict[str, type[StrEnum]] = {"status": QuestionStatus}
_RUN_ENUMS: dict[str, type[StrEnum]] = {"status": RunStatus}


@dataclass(frozen=True, slots=True)
class Typed:
    """A column held as JSON text whose record field is a typed value: ``read`` parses the
    loaded JSON once, as the row becomes a record; ``write`` gives back the very JSON."""

    read: Callable[[Any], Any]
    write: Callable[[Any], Any]


# The Question's typed contents. The payload's kind is the row's ``name``, so
# ``pause_from_row`` parses it (``_Payloads.read``) once the row's columns are read.
_PAUSE_TYPED: dict[str, Typed] = {
    "payload": Typed(lambda values: values, payload_json),
    # Parsed by name and status, as the payload is.
    "answer": Typed(lambda values: values, answer_json),
    "policy": Typed(quorum.stored_policy, quorum.filled),
    "tally": Typed(quorum.stored_tally, quorum.stored_tally_json),
    "posts": Typed(
        lambda posts: tuple(Post.stored(p) for p in posts or ()),
        lambda posts: [p.to_json() for p in posts],
    ),
}


class _Payloads:
    """Payloads by their kind and stored JSON text, the last ``kept`` read or written.

    A question's payload is parsed (validated) from its row each time the row is read: a
    step's write reads back the question it changed, and a close the question just
    asked. The same text always parses to the same payload, and a payload is frozen, so
    one parsed before (or the very one written as this text) is kept instead. A written
    payload is kept only if it is what its text parses to: one of its kind's own model
    (``payload_of``), or an ``OtherPayload`` of a kind without a model.
    """

    def __init__(self, kept: int = 512) -> None:
        self._kept = kept
        self._by_text: dict[tuple[str, str], Payload] = {}

    def read(self, name: str, text: str) -> Payload:
        key = (name, text)
        payload = self._by_text.get(key)
        if payload is None:
            payload = payload_of(name, load(text))
            self._keep(key, payload)
        return payload

    def wrote(self, name: str, text: str, payload: Payload) -> None:
        model = payload_model(name)
        if type(payload) is (OtherPayload if model is None else model):
            self._keep((name, text), payload)

    def _keep(self, key: tuple[str, str], payload: Payload) -> None:
        by_text = self._by_text
        if len(by_text) >= self._kept:
            # All go at once: one step, safe beside SQLite's thread reading rows.
            by_text.clear()
        by_text[key] = payload


_payloads = _Payloads()


class _Layout:
    """How a table's ``columns`` hold a record's fields, worked out once per table: which
    hold JSON text, typed contents (``Typed``) or an enum's value. A record's values are
    read in one call, and only those columns are converted, each with its own function."""

    __slots__ = ("_reads", "_values", "_writes", "columns")

    def __init__(
        self,
        columns: Sequence[str],
        enums: Mapping[str, type[StrEnum]],
        typed: Mapping[str, Typed] | None = None,
    ) -> None:
        self.columns = tuple(columns)
        self._values = operator.attrgetter(*self.columns)
        self._writes: list[tuple[int, Callable[[Any], Any]]] = []
        self._reads: list[tuple[str, Callable[[Any], Any]]] = []
        for i, column in enumerate(self.columns):
            kind = typed.get(column) if typed else None
            if kind is not None:
                self._writes.append((i, _written_as_json(kind.write)))
                self._reads.append((column, _read_from_json(kind.read)))
            elif column in _JSON_COLUMNS:
                self._writes.append((i, dump))
                self._reads.append((column, _tuple_of if column in _TUPLE_COLUMNS else load))
            elif column in enums:
                self._writes.append((i, str))
                self._reads.append((column, enums[column]))

    def params(self, record: Any) -> list[Any]:
        """A record's fields, in ``columns`` order, as the values a column holds."""
        values = list(self._values(record))
        for i, write in self._writes:
            values[i] = write(values[i])
        return values

    def fields(self, row: Row) -> dict[str, Any]:
        """A row's ``columns`` as a record's keyword arguments."""
        fields = {column: row[column] for column in self.columns}
        for column, read in self._reads:
            fields[column] = read(fields[column])
        return fields


def _written_as_json(write: Callable[[Any], Any]) -> Callable[[Any], str | None]:
    return lambda value: dump(write(value))


def _read_from_json(read: Callable[[Any], Any]) -> Callable[[str | None], Any]:
    return lambda text: read(load(text))


def _tuple_of(text: str | None) -> tuple[Any, ...]:
    return tuple(load(text) or ())


_PAUSE_LAYOUT = _Layout(PAUSE_COLUMNS, _ENUMS, _PAUSE_TYPED)
_RUN_LAYOUT = _Layout(RUN_COLUMNS, _RUN_ENUMS)
_API_LAYOUT = _Layout(API_COLUMNS, {})


# Content sealed at rest (``data_keys``): each value bound to its table, column and row,
# so a ciphertext moved to another row or column does not open. The rest (ids, status,
# times, routes, who) stays plaintext: the admin's filters and the SQL read those.
def aad(table: str, column: str, *row: str) -> str:
    """The associated data a value of ``table.column`` is sealed with, for ``row``'s ids."""
    return f"{table}.{column}:" + "\x1f".join(row)


_PAUSE_SEALED = ("payload", "answer")


class _Opened:
    """A row whose sealed columns read as their plaintext."""

    __slots__ = ("_aads", "_row")

    def __init__(self, row: Row, aads: Mapping[str, str]) -> None:
        self._row, self._aads = row, aads

    def __getitem__(self, key: str, /) -> Any:
        value = self._row[key]
        aad_ = self._aads.get(key)
        return value if aad_ is None else data_keys.unseal(value, aad_)


def _is_sealed(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(data_keys.MARKER)


def _opened_pause(row: Row) -> Row:
    # A plaintext row (no keyring, or written before one) is read as it is.
    if not any(_is_sealed(row[c]) for c in _PAUSE_SEALED):
        return row
    key = row["interrupt_id"]
    return _Opened(row, {c: aad("pauses", c, key) for c in _PAUSE_SEALED})


def _sealed(text: str | None, table: str, column: str, *row: str) -> str | None:
    """``data_keys.seal`` of a value of ``table.column``, its associated data built only
    when a keyring seals it."""
    if text is None or data_keys.in_use() is None:
        return text
    return data_keys.seal(text, aad(table, column, *row))


def _unsealed(text: str | None, table: str, column: str, *row: str) -> str | None:
    """``data_keys.unseal`` of a value of ``table.column``, its associated data built only
    for a sealed value."""
    if not _is_sealed(text):
        return text
    return data_keys.unseal(text, aad(table, column, *row))


def answer_text(interrupt_id: str, answer: Answer | None) -> str | None:
    """A close's answer as ``pauses.answer`` holds it."""
    return _sealed(dump(answer_json(answer)), "pauses", "answer", interrupt_id)


def vote_text(interrupt_id: str, voter: str, answer: ApprovalDecision | OtherAnswer) -> str | None:
    """A ballot's answer as ``votes.answer`` holds it."""
    return _sealed(dump(answer_json(answer)), "votes", "answer", interrupt_id, voter)


def vote_answer(interrupt_id: str, voter: str, text: str | None) -> ApprovalDecision | OtherAnswer:
    """``votes.answer`` read back, parsed once: ballots are cast on approvals only."""
    values = load(_unsealed(text, "votes", "answer", interrupt_id, voter))
    answer = answer_of("approval", "answered", values)
    assert isinstance(answer, ApprovalDecision | OtherAnswer)  # all a JSON object parses to
    return answer


def body_text(owe: Owe) -> str:
    """An owed delivery's body as ``outbox.body`` holds it."""
    text = _encode(dict(owe.body))
    return _sealed(text, "outbox", "body", owe.interrupt_id, str(owe.kind)) or text


_PAYLOAD_AT = PAUSE_COLUMNS.index("payload")
_SEALED_AT = tuple((column, PAUSE_COLUMNS.index(column)) for column in _PAUSE_SEALED)


def pause_params(record: Question) -> tuple[Any, ...]:
    """``record`` as the insert's parameters, in ``PAUSE_COLUMNS`` order."""
    values = _PAUSE_LAYOUT.params(record)
    _payloads.wrote(record.name, values[_PAYLOAD_AT], record.payload)
    for column, i in _SEALED_AT:
        values[i] = _sealed(values[i], "pauses", column, record.interrupt_id)
    return tuple(values)


# Written with a question and never read back into it: when its next reminder or
# escalation step falls due (``quorum.nudge_due_at``), so the sweeper's pass reads only the
# questions due, by index, however many are open.
INSERT_PAUSE_COLUMNS = (*PAUSE_COLUMNS, "nudge_due_at")


def pause_insert_params(record: Question) -> tuple[Any, ...]:
    """``record`` as the insert's parameters, in ``INSERT_PAUSE_COLUMNS`` order."""
    due = quorum.nudge_due_at(
        record.policy, record.issued_at, reminders=record.reminders, level=record.level
    )
    return (*pause_params(record), due)


def carried_nudges(rows: Iterable[Sequence[Any]]) -> list[tuple[float | None, str]]:
    """``NUDGE_CARRY``'s rows (id, policy, issued_at, reminders, level) as each question's
    (nudge_due_at, interrupt_id), the parameters of the carry's update."""
    return [
        (
            quorum.nudge_due_at(
                quorum.stored_policy(load(policy)), issued_at, reminders=reminders, level=level
            ),
            interrupt_id,
        )
        for interrupt_id, policy, issued_at, reminders, level in rows
    ]


def pauses_from_rows(rows: Iterable[Row]) -> list[Question]:
    """Fold ``pauses_query`` rows (one per attempt, or one with NULL) into records."""
    grouped: dict[str, tuple[Row, list[Any]]] = {}
    for row in rows:
        _, attempts = grouped.setdefault(row["interrupt_id"], (row, []))
        if row["attempt_json"] is not None:
            attempts.append(load(row["attempt_json"]))
    return [pause_from_row(row, attempts) for row, attempts in grouped.values()]


# The payload is read from its text (``_Payloads``), every other column as ``_fields`` reads it.
_PAUSE_READ = _Layout([c for c in PAUSE_COLUMNS if c != "payload"], _ENUMS, _PAUSE_TYPED)


def pause_from_row(row: Row, attempts: list[Any]) -> Question:
    """A row with ``PAUSE_COLUMNS``, and the question's cross-scope attempts, as a record."""
    opened = _opened_pause(row)
    fields = _PAUSE_READ.fields(opened)
    fields["payload"] = _payloads.read(fields["name"], opened["payload"])
    fields["answer"] = answer_of(fields["name"], fields["status"], fields["answer"])
    kept = tuple(CrossScopeAttempt.stored(a) for a in attempts)
    return Question(**fields, cross_scope_attempts=kept)


def api_params(api: ApiRequest) -> tuple[Any, ...]:
    """``api`` as the insert's parameters, in ``API_COLUMNS`` order."""
    values = _API_LAYOUT.params(api)
    i = API_COLUMNS.index("metadata")
    values[i] = data_keys.seal(values[i], aad("api_questions", "metadata", api.interrupt_id))
    return tuple(values)


def api_from_row(row: Row) -> ApiRequest:
    opened = _Opened(row, {"metadata": aad("api_questions", "metadata", row["interrupt_id"])})
    return ApiRequest(**_API_LAYOUT.fields(opened))


def run_params(run: RunRecord) -> tuple[Any, ...]:
    """``run`` as the insert's parameters, in ``RUN_COLUMNS`` order, conversation_key last."""
    # The conversation's key, as ``Conversation.key`` and the console know it.
    return (*_RUN_LAYOUT.params(run), str(run.conversation.get("key", "")))


def run_from_row(row: Row) -> RunRecord:
    return RunRecord(**_RUN_LAYOUT.fields(row))


def audit_params(event: AuditEvent, *, run_id: str = "") -> tuple[Any, ...]:
    """``event`` as the insert's parameters, its digest last; ``run_id`` stands in for a
    blank one. The store links it into its chain (``bot.audit``) as it is inserted."""
    # Digested as it will be read back: the verifier sees the stored JSON, opened. Its
    # canonical text is that already (``stored_event``), but for a key JSON would change.
    stored = stored_event(event.at, event.kind, event.interrupt_id, event.actor, event.detail)
    if stored is not None:
        detail, digest = stored
    else:
        detail = _encode(event.detail)
        opened = load(detail)
        digest = event_digest(event.at, event.kind, event.interrupt_id, event.actor, opened)
    keys = data_keys.in_use()
    if keys is not None and event.kind not in PLAIN_DETAILS:
        detail = keys.seal(detail, audit_aad(event.interrupt_id, event.kind, event.at))
    return (
        event.at,
        event.kind,
        event.run_id or run_id,
        event.interrupt_id,
        event.actor,
        detail,
        digest,
    )


# A refusal's detail (its reason, a fixed word) stays plaintext: the store's refusal
# counters read it as the event is inserted (``admin stats``).
REFUSED = "refused"
# The events whose detail is stored as it is with data keys set: a refusal's, and those
# whose detail names only what the store keeps in plaintext anyway, a run's surface, a
# question's kind, where a post went (``bot.questions.lifecycle`` builds them; a test holds
# them to those keys). Sealing them would hide nothing, at an AES-GCM call each.
PLAIN_DETAILS = frozenset({REFUSED, "started", "paused", "posted"})


def audit_aad(interrupt_id: str, kind: str, at: float) -> str:
    return aad("audit", "detail", interrupt_id, kind, repr(float(at)))


def audit_detail(row: Row) -> Any:
    """An audit row's detail, opened and loaded."""
    sealed = row["detail"]
    return load(data_keys.unseal(sealed, audit_aad(row["interrupt_id"], row["kind"], row["at"])))


AUDIT_COLUMNS = ("at", "kind", "run_id", "interrupt_id", "actor", "detail")
_AUDIT_LAYOUT = _Layout(AUDIT_COLUMNS, {})


def audit_from_row(row: Row) -> AuditEvent:
    opened = _Opened(row, {"detail": audit_aad(row["interrupt_id"], row["kind"], row["at"])})
    return AuditEvent(**_AUDIT_LAYOUT.fields(opened))


def _delivery_ids(row: Row) -> tuple[str, str]:
    return row["interrupt_id"], row["kind"]


def delivery_from_row(row: Row, *, followed: bool = False) -> OutboxRow:
    return OutboxRow(
        delivery_id=row["id"],
        run_id=row["run_id"],
        surface=row["surface"],
        kind=DeliveryKind(row["kind"]),
        interrupt_id=row["interrupt_id"],
        body=load(_unsealed(row["body"], "outbox", "body", *_delivery_ids(row))),
        attempts=row["attempts"],
        state=DeliveryState(row["state"]),
        next_at=row["next_at"],
        last_error=row["last_error"],
        followed=followed,
    )


def owed_delivery(
    delivery_id: int,
    run_id: str,
    surface: str,
    owe: Owe,
    at: float,
    question: Question | None,
) -> OutboxRow:
    """An outbox row as the write that owed it left it; a post or an edit carries the
    question as that write left it, so its first delivery reads nothing."""
    carried = question if owe.kind in (DeliveryKind.PUBLISH, DeliveryKind.CLOSED) else None
    return OutboxRow(
        delivery_id,
        run_id,
        surface,
        owe.kind,
        owe.interrupt_id,
        dict(owe.body),
        next_at=at,
        pause=carried,
    )


def held(write: Write) -> tuple[str, float]:
    """Who holds the rows ``write`` owes, until when: ("", 0.0), anyone's at once."""
    claim = write.claim
    return (claim.owner, claim.until) if claim is not None else ("", 0.0)


def owed_rows(
    write: Write,
    question: Question | None,
    *,
    run_id: str,
    surface: str,
    written: Iterable[tuple[int, int]],
    earlier: Sequence[int],
) -> tuple[Owed, ...]:
    """The rows ``write`` owed, as written: ``written`` pairs each inserted row's id with
    the index of its ``Owe`` in ``write.owe``, in order (an owe the write skipped, its
    condition unmet, is not among them); ``earlier``, the run's rows pending before."""
    held_by, held_until = held(write)
    before = list(earlier)
    owed: list[Owed] = []
    for delivery_id, index in written:
        owe = write.owe[index]
        delivery = owed_delivery(
            delivery_id, run_id, owe.surface or surface, owe, write.at, question
        )
        owed.append(Owed(delivery, held_by, held_until, tuple(before)))
        before.append(delivery_id)
    return tuple(owed)


# An admin's ``pending`` listing: each question, its run's requester and its cursor.
# Its ``FROM`` (``pauses AS p`` and ``runs AS r``) is each backend's, on its indexes.
PENDING_SELECT = "SELECT " + ", ".join(
    [
        *(f"p.{c}" for c in PAUSE_COLUMNS),
        "p.seq",
        "COALESCE(r.requester, '') AS requester",
        "COALESCE(r.surface, '') AS surface",
    ]
)


def pending_cursor(after: str | None) -> int:
    """The position an admin's ``after=`` names (the cursor a ``pending`` page printed);
    0 for none; ValueError, saying so, for text that is not one."""
    if not after:
        return 0
    try:
        return int(after)
    except ValueError:
        raise ValueError(f"{after!r} is not a page cursor; pass the one a page returned") from None


def pending_from_row(row: Row) -> tuple[Question, str, str, str]:
    """A row of ``PENDING_SELECT``: the question (no attempts), its run's requester and
    surface, its cursor."""
    return pause_from_row(row, []), row["requester"], row["surface"], str(row["seq"])


def state_text(checkpoint_id: str, state: Mapping[str, Any]) -> str:
    """A run's turn state (its conversation) as ``checkpoints.state`` holds it."""
    return sealed_state(checkpoint_id, _encode(dict(state)))


def sealed_state(checkpoint_id: str, text: str) -> str:
    """Turn state's JSON ``text`` as ``checkpoints.state`` holds it."""
    return _sealed(text, "checkpoints", "state", checkpoint_id) or text


def state_of(checkpoint_id: str, text: str) -> dict[str, Any]:
    """``checkpoints.state`` read back."""
    opened = _unsealed(text, "checkpoints", "state", checkpoint_id) or text
    return dict(json.loads(opened))


def journal_text(step: str, value: Any) -> str:
    """A finished step's value as ``journal.value`` holds it."""
    text = _encode(value)
    return _sealed(text, "journal", "value", step) or text


def journal_value(step: str, text: str) -> Any:
    """``journal.value`` read back."""
    return json.loads(_unsealed(text, "journal", "value", step) or text)


def paused_turn(
    checkpoint_id: str, state: str | None, journal: Iterable[Sequence[str]]
) -> TurnToResume:
    """A paused turn as a close read it: its checkpoint's text, the journal's (step, value)s."""
    steps = {step: journal_value(step, value) for step, value in journal}
    return TurnToResume(None if state is None else state_of(checkpoint_id, state), steps)


def write_texts(write: Write) -> dict[str, Any]:
    """A write's rows and JSON, encoded before the database is touched: a bad value
    never takes a lock."""
    texts: dict[str, Any] = {}
    if write.new_run is not None:
        texts["run"] = run_params(write.new_run)
    if isinstance(write.question, Question):
        texts["question"] = pause_insert_params(write.question)
    if write.api is not None:
        texts["api"] = api_params(write.api)
    if write.checkpoint is not None:
        checkpoint = write.checkpoint
        texts["checkpoint"] = state_text(checkpoint.checkpoint_id, checkpoint.state)
    for step, value in write.journal.items():
        texts[f"journal:{step}"] = journal_text(step, value)
    return texts
