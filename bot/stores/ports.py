"""Store ports. Each backend (memory, SQLite, PostgreSQL) implements all five.

Spending a token and recording the answer are one port call (``spend``)
because they must be one transaction: a crash between them would either
lose an answer or let a token be spent twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from bot.stores.records import (
    AuditEvent,
    Closing,
    ConversationSummary,
    PauseRecord,
    RunRecord,
    RunStatus,
)


class Consumption(Protocol):
    """Records that a token was spent; redemption relies on it to refuse a replay."""

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        """Close an outstanding pause and spend its token, atomically.

        True for the one caller that spent it; False if it was already
        spent or closed, however many processes race.
        """
        ...


class Ledger(Protocol):
    """Issued pauses; the capability writes them, redemption and admins read them."""

    async def issue(self, record: PauseRecord) -> None: ...
    async def get(self, interrupt_id: str) -> PauseRecord | None: ...
    async def set_message_ref(self, interrupt_id: str, ref: dict[str, Any]) -> None: ...
    async def record_cross_scope(self, interrupt_id: str, attempt: dict[str, Any]) -> None: ...
    async def mark_resumed(self, interrupt_id: str, at: float) -> None: ...
    async def claim_resume(self, interrupt_id: str, *, now: float, until: float) -> bool:
        """Take the right to resume a closed pause until ``until``.

        True for one claimant at a time across every process sharing the
        store; an expired claim (its holder died) can be taken again, and a
        resumed pause can never be claimed.
        """
        ...

    async def outstanding(self, *, scope: str | None = None) -> list[PauseRecord]: ...
    async def overdue(self, now: float, *, limit: int = 100) -> list[PauseRecord]: ...
    async def unresumed(self) -> list[PauseRecord]: ...
    async def for_runs(self, run_ids: Sequence[str]) -> list[PauseRecord]:
        """Every pause of these runs, in the order they were issued."""
        ...


class Checkpoints(Protocol):
    """Versioned turn state; the capability saves it at a pause, resume loads it."""

    async def save(self, run_id: str, state: dict[str, Any]) -> str: ...
    async def load(self, checkpoint_id: str) -> dict[str, Any] | None: ...


class Runs(Protocol):
    """Runs and where they live; RunService relies on it to post outcomes."""

    async def create(self, run: RunRecord) -> bool:
        """Store a new run; False (and nothing changed) if its id exists already.

        Surfaces derive a run id from a platform event id, so a retried event
        (or the same event reaching two replicas) starts one run, not two.
        """
        ...

    async def get(self, run_id: str) -> RunRecord | None: ...
    async def set_status(
        self, run_id: str, status: RunStatus, *, at: float, text: str = ""
    ) -> None: ...
    async def recent(self, *, limit: int = 50) -> list[RunRecord]: ...
    async def in_conversation(self, surface: str, key: str, *, limit: int = 50) -> list[RunRecord]:
        """The latest ``limit`` runs started in one conversation, oldest first."""
        ...

    async def conversations(self, surface: str, *, limit: int = 50) -> list[ConversationSummary]:
        """A surface's conversations, most recently active first."""
        ...


class Audit(Protocol):
    """Append-only history; admins read it, nothing rewrites it."""

    async def append(self, event: AuditEvent) -> None: ...
    async def recent(self, *, limit: int = 100, run_id: str | None = None) -> list[AuditEvent]: ...


class Installations(Protocol):
    """Platform installations (Slack OAuth); the adapter encrypts, the store keeps opaque text."""

    async def save(self, platform: str, key: str, blob: str) -> None: ...
    async def find(self, platform: str, key: str) -> str | None: ...
    async def delete(self, platform: str, key: str) -> None: ...


class Stores(Protocol):
    """One backend's ports, opened and closed together."""

    # Read-only so each backend may narrow them to its own classes.
    @property
    def consumption(self) -> Consumption: ...
    @property
    def ledger(self) -> Ledger: ...
    @property
    def checkpoints(self) -> Checkpoints: ...
    @property
    def runs(self) -> Runs: ...
    @property
    def audit(self) -> Audit: ...
    @property
    def installations(self) -> Installations: ...

    async def ping(self) -> None: ...
    async def close(self) -> None: ...
