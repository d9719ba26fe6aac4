"""Outbox rows a process's own lifecycle steps just owed, kept for its deliverer.

A step owes its message in the same transaction (the outbox row), born
claimed by the process that wrote the step. That process need not find the
row again with a claim: once the write has committed, the step's result is
handed over here (``bot.questions.lifecycle.Lifecycle.bind``), with the
question as the write left it. The row in the store stays the truth; the hand-off only
spares the claim's read and the ledger read.

Order is what the claim guarantees and the hand-off must keep: a run's rows
go out oldest first, and a row waiting for a retry holds back the ones owed
after it. So a row is handed over only if every older pending row of its run
is in hand here too. Anything the hand-off cannot vouch for (an older row
owed by another write, a full hand-off) is reported as "claim needed", and
the deliverer claims as it would without a hand-off. Nothing is lost if the
process dies: the rows are in the store, born claimed until the lease ends,
and then anyone's.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import replace

from bot.questions.records import OutboxRow
from bot.questions.write import Owed

# Rows in hand at most: a store nobody delivers from (the admin shell) stops
# handing over rather than grow; its rows are claimed as before.
OWED_LIMIT = 1000


class OwedRows:
    """Rows owed by this process's writes, not yet taken by its deliverer."""

    def __init__(self, *, limit: int = OWED_LIMIT) -> None:
        self._ready: deque[Owed] = deque()
        # How many rows in ``_ready`` are about each question: a burst of answers
        # owes a row each, and each checks for rows of its question ahead of it.
        self._questions: Counter[str] = Counter()
        # Handed over and not yet settled (delivered, or given back to the claim).
        self._in_hand: set[int] = set()
        # Settled as no longer pending, lately: a write whose snapshot still saw
        # one of these pending (PostgreSQL, a statement racing the mark) is
        # behind nothing.
        self._done: set[int] = set()
        self._done_order: deque[int] = deque()
        self._claim_needed = False
        self._limit = limit

    def owe_all(self, owed: Sequence[Owed]) -> None:
        """After commit: the rows one write owed, in order."""
        for one in owed:
            self._owe(one)

    def _owe(self, owed: Owed) -> None:
        row = owed.delivery
        if row.delivery_id in self._done:
            return  # a claim saw it committed and delivered it first
        if row.interrupt_id:
            self._followed(row.interrupt_id)
        vouched = bool(owed.held_by) and all(
            e in self._in_hand or e in self._done for e in owed.earlier
        )
        if not vouched or len(self._in_hand) >= self._limit:
            self._claim_needed = True
            return
        if owed.earlier and row.pause is not None:
            # Rows still owed before it may change the question when delivered (a
            # post's delivery saves its message reference), so it is read then.
            owed = replace(owed, delivery=replace(row, pause=None))
        self._ready.append(owed)
        self._questions[row.interrupt_id] += 1
        self._in_hand.add(row.delivery_id)

    def take(
        self, owner: str, now: float, *, limit: int = OWED_LIMIT
    ) -> tuple[list[OutboxRow], bool]:
        """The rows ``owner`` holds, oldest first, and whether a claim is needed besides.

        A row whose born claim has run out (another process may claim it
        now) is given back to the claim; one held by another owner is left
        for that owner's deliverer. At most ``limit`` rows: the rest wait for
        the next take.
        """
        taken: list[OutboxRow] = []
        kept: deque[Owed] = deque()
        claim, self._claim_needed = self._claim_needed, False
        for handed in self._ready:
            if handed.held_until <= now:
                self._in_hand.discard(handed.delivery.delivery_id)
                claim = True
            elif handed.held_by == owner and len(taken) < limit:
                taken.append(handed.delivery)
            else:
                # Another deliverer's on this store object (tests), or the next batch.
                kept.append(handed)
        self._keep(kept)
        return taken, claim

    def holds(self, delivery_id: int) -> bool:
        """The row is in hand: a claim that returns it leaves it to the hand-off."""
        return delivery_id in self._in_hand

    def settle(self, delivery_id: int, *, pending: bool = False) -> None:
        """The deliverer is done with the row, handed or claimed: delivered or given
        up on, or, if ``pending``, left to the claim (a retry, another surface)."""
        self._in_hand.discard(delivery_id)
        if pending:
            return
        self._done.add(delivery_id)
        self._done_order.append(delivery_id)
        if len(self._done_order) > self._limit:
            self._done.discard(self._done_order.popleft())

    def unsettle(self, delivery_id: int, run_id: str) -> None:
        """A row settled as delivered was not marked so: it is pending again, and its
        run's later rows wait for the claim behind it."""
        self._done.discard(delivery_id)
        self.hold_back(run_id)

    def _followed(self, interrupt_id: str) -> None:
        """A row about the question was owed behind those in hand (a close, an
        extension, a repost): as a claim would, flag them ``followed``, and drop
        their copy of the question, which is read again when they are delivered."""
        if self._questions[interrupt_id]:
            self._ready = deque(
                replace(h, delivery=replace(h.delivery, followed=True, pause=None))
                if h.delivery.interrupt_id == interrupt_id
                else h
                for h in self._ready
            )

    def hold_back(self, run_id: str) -> None:
        """A row of the run failed: its later rows wait for the claim, behind the retry."""
        kept = deque(h for h in self._ready if h.delivery.run_id != run_id)
        for handed in self._ready:
            if handed.delivery.run_id == run_id:
                self._in_hand.discard(handed.delivery.delivery_id)
        self._keep(kept)

    def _keep(self, ready: deque[Owed]) -> None:
        self._ready = ready
        self._questions = Counter(h.delivery.interrupt_id for h in ready)
