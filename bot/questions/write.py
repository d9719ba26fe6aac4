"""What one lifecycle step writes, and the unit-of-work port that writes it atomically.

A step (``bot.questions.lifecycle``) reads what it needs, decides, and
describes every change as one ``Write``, a small typed plan applied in
this order: its guards (the command's idempotency key, ``OnceKey``; the
run that must not exist yet; the question's change, which holds only while
the question stands as the change requires, ``Expiry`` included), its
inserts and updates (the question, the run's row, checkpoint, journal,
audit) and the messages it owes (outbox rows), each owed unconditionally
or only when the question names a callback (``Owe.only_with_callback``).
A guard that fails refuses the whole write. The backend applies a
``Write`` in one transaction (on PostgreSQL, one statement where it can),
translating each part into its SQL; what is guarded, and what follows
from what, is decided here, so no rule of the lifecycle lives in
``bot/stores``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from bot.contract.answers import Answer, ApprovalDecision, OtherAnswer
from bot.contract.models import Tally
from bot.questions.records import (
    ApiRequest,
    AuditEvent,
    CrossScopeAttempt,
    DeliveryKind,
    OutboxRow,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)

# How long a command's idempotency key is kept: longer than any request stays
# acceptable (a Slack signature's window, a Teams token's life).
ONCE_KEY_SECONDS = 86_400.0


@dataclass(frozen=True, slots=True)
class OnceKey:
    """A command's idempotency key (derived from the request that asked for it), the
    write's first guard: recorded with the write until ``until``, and the whole write is
    refused if it is on record already, so a replayed or retried command changes
    nothing, on any replica. Keys expired by the write's ``at`` are pruned first, so an
    expired key is free again; a write its other guards refuse keeps no key."""

    key: str
    until: float


def once_key_at(key: str, at: float) -> OnceKey | None:
    """``key`` as a write at ``at`` records it (kept ``ONCE_KEY_SECONDS``); None for none."""
    return OnceKey(key, at + ONCE_KEY_SECONDS) if key else None


@dataclass(frozen=True, slots=True)
class Owe:
    """A message the change owes a person, delivered by whoever holds its claim."""

    kind: DeliveryKind
    interrupt_id: str = ""
    body: Mapping[str, Any] = field(default_factory=dict)
    # The surface it goes to; blank: the run's (a further post's is its own).
    surface: str = ""
    # Owed only if the question names a callback (an API question's ``callback_url``),
    # which the write does not read: the backend tests it with the insert.
    only_with_callback: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """Who delivers the rows a write owes, until when: the process that wrote it."""

    owner: str
    until: float


@dataclass(frozen=True, slots=True)
class RunMove:
    """The run's row after the step. ``only_if``: a run in another status is left alone
    (and, when ``required``, the whole write is refused)."""

    run_id: str
    at: float
    status: RunStatus | None = None
    only_if: RunStatus | None = None
    required: bool = False
    # (owner, until) to take the lease; ("", None) to clear it; None leaves it.
    lease: tuple[str, float | None] | None = None
    final_text: str | None = None
    # Every closed question of the run has been continued from.
    resumed: bool = False


class Expiry(StrEnum):
    """What a change requires of the question's expiry at its ``at``, beside its being
    outstanding."""

    # Whatever it is (an answer checked against the row just read, a cancel).
    ANY = "any"
    # Overdue: ``expires_at <= at``.
    OVERDUE = "overdue"
    # Not overdue yet: ``expires_at > at``.
    UNEXPIRED = "unexpired"


@dataclass(frozen=True, slots=True)
class Close:
    """An outstanding question closed (answered, expired, cancelled): guarded, so one wins.

    ``expiry``: what the close requires of the question's expiry besides
    (``bot.questions.lifecycle`` decides it). ``tally``: stored with the close (the
    ballots of a quorum the closing ballot decided).
    """

    interrupt_id: str
    status: QuestionStatus
    at: float
    by: str = ""
    by_id: str = ""
    answer: Answer | None = None
    expiry: Expiry = Expiry.ANY
    # The closer resumes the turn: the write returns what the resume reads (``TurnToResume``).
    with_turn: bool = False
    tally: Tally | None = None


@dataclass(frozen=True, slots=True)
class NewExpiry:
    """An outstanding question's new expiry."""

    interrupt_id: str
    expires_at: float


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The paused turn's state, saved with the question that names it."""

    checkpoint_id: str
    run_id: str
    state: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StillOpen:
    """No change to the question, but the write goes through only while it is outstanding."""

    interrupt_id: str


@dataclass(frozen=True, slots=True)
class Nudge:
    """A reminder or an escalation step counted on an outstanding question, once: the
    write goes through only while it still has ``was`` (reminders, level)."""

    interrupt_id: str
    was: tuple[int, int]
    now: tuple[int, int]
    # When the next one falls due once this one is counted (``quorum.nudge_due_at``).
    due_at: float | None


@dataclass(frozen=True, slots=True)
class Tallied:
    """An outstanding question's new tally (a ballot that did not decide it)."""

    interrupt_id: str
    tally: Tally


@dataclass(frozen=True, slots=True)
class Posted:
    """Where the question stands posted on its first route: its message reference, kept
    whatever its status (an edit owed by a close still needs the message it edits)."""

    interrupt_id: str
    ref: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Attempted:
    """An answer from outside the question's scopes, counted on it whatever its status,
    and kept among its latest ``keep`` attempts (``Question.cross_scope_attempts``)."""

    interrupt_id: str
    attempt: CrossScopeAttempt
    keep: int


QuestionChange = Question | Close | NewExpiry | StillOpen | Nudge | Tallied | Posted | Attempted


@dataclass(frozen=True, slots=True)
class Delivered:
    """A row delivered, and the posted message's reference if it was a post."""

    delivery_id: int
    at: float
    message_ref: dict[str, Any] | None = None
    # Which further post of its question it was (``bot.questions.posts``); None: the first.
    post: int | None = None
    # A question's post (its first, a further route's, or a repost): audited as ``posted``.
    posting: Posting | None = None


@dataclass(frozen=True, slots=True)
class Posting:
    """Which question a delivered post put in front of people, and where."""

    run_id: str
    interrupt_id: str
    surface: str
    repost: bool = False


@dataclass(frozen=True, slots=True)
class PostedBy:
    """Where a delivered post left its question posted: the message reference, kept on the
    question its outbox row names, as the first route's (``post`` None) or as that further
    post's, whatever the question's status."""

    delivery_id: int
    ref: Mapping[str, Any]
    post: int | None = None


@dataclass(frozen=True, slots=True)
class Marks:
    """Outbox rows delivered (each ``Delivered``'s row and time), and the references the
    posts among them left (``posted``)."""

    done: tuple[Delivered, ...]
    posted: tuple[PostedBy, ...] = ()


@dataclass(frozen=True, slots=True)
class Write:
    """Everything one step changes, applied all or nothing.

    ``question``: a new question (a ``Question``, inserted; refused if its id
    exists) or a change of a known one; a change that finds the question not as
    it requires (outstanding, for all but ``Posted`` and ``Attempted``) refuses
    the whole write, as does an unknown question. ``run`` likewise
    refuses it when ``required`` and the run is not ``only_if``. A ``Close``
    may leave ``run_id`` (here, in ``run`` and in ``audit``) blank: the backend
    takes it from the closed row, which the caller has not read.
    """

    run_id: str
    at: float
    # A run started: inserted, or the whole write refused if its id exists.
    new_run: RunRecord | None = None
    # With ``new_run``: the latest this many runs of its conversation come back
    # (``Written.earlier``), what its first turn replays.
    history: int = 0
    question: QuestionChange | None = None
    run: RunMove | None = None
    checkpoint: Checkpoint | None = None
    journal: Mapping[str, Any] = field(default_factory=dict)
    audit: tuple[AuditEvent, ...] = ()
    owe: tuple[Owe, ...] = ()
    # The rows owed are born claimed so; None: anyone's at once (a shell with no deliverer).
    claim: Claim | None = None
    # An API question's own fields, inserted with the question (``ask_remote``).
    api: ApiRequest | None = None
    # A command's idempotency key: the write's first guard (``OnceKey``).
    once_key: OnceKey | None = None
    # A deliverer's pass, marked: a write of marks carries nothing else but the ``posted``
    # events of its posts (on PostgreSQL, its commit waits for no fsync: a lost mark, and
    # its events with it, costs a repeat, delivered and audited again, never a loss).
    marks: Marks | None = None


@dataclass(frozen=True, slots=True)
class Owed:
    """A row a write owed, as written: its claim, and its run's rows pending before it."""

    delivery: OutboxRow
    held_by: str
    held_until: float
    earlier: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TurnToResume:
    """What resuming a closed question reads, read by the close itself: the checkpoint the
    question names (None if it is gone) and the run's journal as it stood."""

    state: Mapping[str, Any] | None
    journal: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Written:
    """What a write that went through left: the question as it now stands, the rows owed,
    for a ``Close`` ``with_turn`` the turn it resumes, and for a ``history`` the started
    run's conversation's latest runs, oldest first (maybe the started run among them)."""

    question: Question | None = None
    owed: tuple[Owed, ...] = ()
    turn: TurnToResume | None = None
    earlier: tuple[RunRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class Ballot:
    """One person's answer to a question under a quorum: one on record per (question, voter),
    a later one replacing it only when the quorum's rule lets that person vote again."""

    interrupt_id: str
    voter: str
    display: str
    decision: str
    # The voter's approval, as the registration cleaned it; read back from its row, a
    # value no model takes (a retention pass's ``{}``) stays what it is.
    answer: ApprovalDecision | OtherAnswer
    at: float


# Given the question (locked, outstanding) and the ballots on record before this one, in the
# order cast: the write the vote makes (a ``Close``, or a ``Tallied`` redraw), the tally
# included; None when the voter's ballot on record stands (under this id or another of the
# same person's) and this one is refused.
Decide = Callable[[Question, tuple[Ballot, ...]], Write | None]


@dataclass(frozen=True, slots=True)
class Voted:
    """What a ballot came to: the write it made (None: refused), and why it was refused."""

    written: Written | None
    # The voter had answered this question already: nothing changed.
    again: bool = False


class UnitOfWork(Protocol):
    """One backend's atomic writer; the lifecycle relies on it, and on nothing else, to write."""

    async def apply(self, write: Write) -> Written | None:
        """Apply ``write`` in one transaction; None (nothing written) if a guard refused it."""
        ...

    async def question(self, interrupt_id: str) -> Question | None:
        """The question as stored, cross-scope attempts included."""
        ...

    async def vote(self, ballot: Ballot, decide: Decide) -> Voted:
        """In one transaction serialized per question: the question locked (refused unless
        outstanding), its ballots read in the order cast, ``decide`` asked (None: refused,
        ``again``), the ballot written over the voter's earlier one if any, and ``decide``'s
        write applied."""
        ...
