"""Store ports. Each backend (SQLite, PostgreSQL) implements all of them.

Every change of a question's life goes through one port, ``unit`` (the
lifecycle's unit of work, ``bot.questions.write``): spending a token and
recording the answer, or pausing a run and owing its post, are one
transaction, so a crash can delay a message, never lose it and never
spend a token twice. The other ports read, or keep what is no step of the
lifecycle (leases, the journal, deliveries, installations).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.audit import CheckpointKey
from bot.human.ports import Checkpoints as Checkpoints  # the capability defines it
from bot.kernel.journal import Journal
from bot.questions.records import (
    ApiKey,
    ApiView,
    AuditEvent,
    ConversationSummary,
    OutboxRow,
    PendingFilter,
    Question,
    QuestionStats,
    QuestionStatus,
    RunRecord,
)
from bot.questions.write import Delivered as Delivered  # the lifecycle's ``delivered`` takes it
from bot.questions.write import Posting as Posting  # what a delivered post names
from bot.questions.write import UnitOfWork


class Ledger(Protocol):
    """Issued questions as stored; redemption, delivery and admins read them (every change
    of one is a lifecycle step, written by ``unit``)."""

    async def get(self, interrupt_id: str) -> Question | None: ...
    async def outstanding(self, *, scope: str | None = None) -> list[Question]: ...
    async def nudges_due(self, now: float, *, limit: int = 100) -> list[Question]:
        """Outstanding questions whose next reminder or escalation step is due by ``now``,
        the longest due first, at most ``limit``: read by index, however many are open."""
        ...

    async def overdue(self, now: float, *, limit: int = 100) -> list[Question]: ...
    async def for_runs(self, run_ids: Sequence[str]) -> list[Question]:
        """Every pause of these runs, in the order they were issued."""
        ...


class Runs(Protocol):
    """Runs and where they live; RunService relies on it to post outcomes."""

    async def get(self, run_id: str) -> RunRecord | None: ...
    async def recent(self, *, limit: int = 50) -> list[RunRecord]: ...
    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        """The latest ``limit`` runs started in one conversation, oldest first."""
        ...

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        """A surface's conversations, most recently active first."""
        ...


class Leases(Protocol):
    """Who drives a run until when; RunService relies on it so one worker drives a run."""

    async def acquire(self, run_id: str, owner: str, *, now: float, until: float) -> bool:
        """Take (or extend) the lease of a RUNNING run whose lease is free, lapsed or ours."""
        ...

    async def renew(self, run_id: str, owner: str, *, until: float) -> bool:
        """Extend our lease; False if it is no longer ours."""
        ...

    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease up (if it is ours) so another worker may take over at once."""
        ...

    async def lapsed(self, now: float, *, limit: int = 100) -> list[str]:
        """RUNNING runs nobody holds: work owed whose worker finished badly or died."""
        ...


class Outbox(Protocol):
    """Messages owed to people; whichever process claims a row delivers it (and marks it
    delivered through the lifecycle's ``delivered`` step)."""

    async def claim(
        self, now: float, *, until: float, owner: str, surfaces: Sequence[str], limit: int = 50
    ) -> list[OutboxRow]:
        """Due rows of these surfaces that ``owner`` may deliver, the oldest per run only,
        so a run's messages arrive in the order they were owed; ``followed``
        says another row of the run waits behind the one returned.

        A row is born claimed under its run's lease (by the process that made
        the change, until the lease's end); other rows are claimed here until
        ``until``, by one owner across every process sharing the store.
        """
        ...

    async def retry(self, delivery_id: int, *, next_at: float, error: str) -> None:
        """Count a failed attempt and release the row until ``next_at``."""
        ...

    async def failed(self, delivery_id: int, *, at: float, error: str) -> None:
        """Give up: the row is failed and ``error`` is marked on its run."""
        ...

    async def of_run(self, run_id: str) -> list[OutboxRow]:
        """Every row of a run, oldest first (admins, tests)."""
        ...


class Audit(Protocol):
    """Append-only history; admins read it, nothing rewrites it."""

    async def append(self, event: AuditEvent) -> None: ...
    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]: ...


class AuditChain(Protocol):
    """The audit's hash chains: the checkpointer signs them, ``python -m bot audit`` exports."""

    async def checkpoint(self, key: CheckpointKey, *, at: float) -> dict[str, Any] | None:
        """Sign the heads that moved since the last checkpoint; the checkpoint written, or
        None if another process wrote that number first."""
        ...

    def export(
        self,
        *,
        since: float | None = None,
        until: float | None = None,
        question: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Checkpoints, then whole chains in order (``bot.audit.verify`` reads them so)."""
        ...


@dataclass(frozen=True, slots=True)
class HistoryFilter:
    """Which closed questions ``History.closed`` lists; None is any."""

    status: str | None = None
    scope: str | None = None
    surface: str | None = None
    requester: str | None = None
    decided_by: str | None = None
    decision: str | None = None
    since: float | None = None
    until: float | None = None


@dataclass(frozen=True, slots=True)
class Closed:
    """A closed question, who asked it and where, whether its content was purged, and the
    cursor a page that ends with it continues from."""

    question: Question
    requester: str
    surface: str
    purged: bool
    cursor: str


class History(Protocol):
    """Closed questions, newest first; ``admin history`` relies on it."""

    async def closed(
        self, where: HistoryFilter, *, after: str | None = None, limit: int = 20
    ) -> Sequence[Closed]:
        """Up to ``limit`` closed questions, newest first, after the cursor ``after``."""
        ...


class Retention(Protocol):
    """Purges closed questions' content; the retention sweep and ``admin purge`` rely on it."""

    async def purge(self, before: float, *, at: float, limit: int = ...) -> int:
        """Purge a batch of the questions closed before ``before``; how many were."""
        ...

    async def purge_all(self, before: float, *, at: float) -> int:
        """Every question closed before ``before``, batch by batch; how many."""
        ...


class DataRekey(Protocol):
    """The sealed content columns and the data keys (``bot.stores.data_keys``)."""

    async def batch(self, limit: int = ...) -> int:
        """Move a batch of rows onto the current key; how many were read (0: none left)."""
        ...

    async def all(self) -> int:
        """Every row onto the current key, batch by batch."""
        ...


class Installations(Protocol):
    """Platform installations (Slack OAuth); the adapter encrypts, the store keeps opaque text."""

    async def save(self, platform: str, key: str, blob: str) -> None: ...
    async def find(self, platform: str, key: str) -> str | None: ...
    async def delete(self, platform: str, key: str) -> None: ...


class AdminStore(Protocol):
    """Reads and writes of admin commands; ``bot.admin`` relies on it, nothing else."""

    async def pending(
        self, *, where: PendingFilter, after: str | None = None, limit: int = 20
    ) -> list[tuple[Question, str, str, str]]:
        """Outstanding questions in issue order, after the cursor ``after``: each with its
        run's requester and surface (blank for none) and the cursor that goes on after it. A listed
        question carries no cross-scope attempts (their count only): no listing shows them.

        Keyset pagination on an index of outstanding rows: the first page
        costs the same with ten or a million questions open.
        """
        ...

    async def stats(self) -> QuestionStats:
        """Counts and percentiles aggregated in the store, never row by row here."""
        ...


class ApiRecords(Protocol):
    """The agents API's questions (asked through the lifecycle) and keys; ``bot.api`` uses it."""

    async def get(self, interrupt_id: str) -> ApiView | None: ...

    async def by_idempotency_key(self, key_id: str, idempotency_key: str) -> ApiView | None: ...

    async def page(
        self,
        key_id: str,
        *,
        status: QuestionStatus | None,
        run_ref: str | None,
        before: tuple[float, str] | None,
        limit: int,
    ) -> list[ApiView]:
        """Key ``key_id``'s questions, newest first, older than ``before`` (created_at, id)."""
        ...

    async def add_key(self, key: ApiKey) -> bool:
        """Keep ``key`` (its hash); False if its name is taken."""
        ...

    async def keys(self) -> list[ApiKey]: ...

    async def key_by_hash(self, key_hash: str) -> ApiKey | None: ...

    async def claim_unowned(self, name: str, key_id: str) -> int:
        """Give ``key_id`` the unowned questions from before key ids that carry ``name``."""
        ...

    async def revoke_key(self, name: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """How a request was first answered, to answer its replays the same."""

    status: int
    body: bytes
    content_type: str | None


@dataclass(frozen=True, slots=True)
class Seen:
    """A request's claim: ``first`` if no process had it; else the first's answer, if any yet."""

    first: bool
    answered: StoredResponse | None = None


class Replays(Protocol):
    """Requests seen lately and commands' idempotency keys, shared by every replica;
    surfaces rely on it so a replayed request changes nothing, wherever it lands."""

    async def claim(self, key: str, *, now: float, until: float) -> Seen:
        """Record ``key`` until ``until`` if no process holds it (``first``); else what the
        first was answered (None while it is in flight, or if its process died). Expired
        records are pruned here, so the record holds one window of requests at most."""
        ...

    async def settle(self, key: str, answered: StoredResponse | None) -> None:
        """The first request's answer; None if it failed and a resend may try again."""
        ...

    async def applied(self, key: str) -> bool:
        """A command with this idempotency key (``Write.once_key``) was written."""
        ...


class Stores(Protocol):
    """One backend's ports, opened and closed together."""

    unit: UnitOfWork
    ledger: Ledger
    checkpoints: Checkpoints
    runs: Runs
    audit: Audit
    audit_chain: AuditChain
    retention: Retention
    rekey: DataRekey
    history: History
    leases: Leases
    journal: Journal
    outbox: Outbox
    installations: Installations
    admin: AdminStore
    api: ApiRecords
    replays: Replays

    async def ping(self) -> None: ...
    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Change:
    """A run changed (a question opened or closed, the run ended) in some process."""

    run_id: str
    surface: str
    # The conversation's key, as ``Conversation.key`` and the console know it.
    key: str


class Changes(Protocol):
    """Changes made by every process sharing the store; live pages (the console) rely on it."""

    def subscribe(self, callback: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``callback`` on the event loop for each change; the result unsubscribes."""
        ...


class NoChanges:
    """No feed: only this process writes the store, and its surfaces see its own changes."""

    def subscribe(self, callback: Callable[[Change], None]) -> Callable[[], None]:
        del callback
        return lambda: None


def changes_of(stores: Stores) -> Changes:
    """The backend's change feed (PostgreSQL's ``changes``), else ``NoChanges``.

    Optional rather than a ``Stores`` member: a backend written by one process
    has nothing to announce, and needs no code for it.
    """
    changes: Changes | None = getattr(stores, "changes", None)
    return changes if changes is not None else NoChanges()
