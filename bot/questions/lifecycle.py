"""The steps of a question's life, each one ``Write`` through the unit of work.

start    a run from a person's message, once per platform event.
ask_remote  a question an agent asked over the API: its carrier run (REMOTE:
         nothing here resumes it) and the question, once per idempotency key.
ask      a new outstanding question: its run waits on a person (no lease),
         earlier closed questions count as continued from, the post is owed;
         with the paused turn's checkpoint and journal entries in the same write.
close    answered, expired or cancelled, once however many race: the run is
         owed its resume (leased to the closer in the same write), the edit
         of each posted message is owed (one per post, ``bot.questions.posts``).
vote     one person's answer under a quorum, counted once per person; the ballot
         that decides the question closes it (as ``close`` does), any other
         owes a redraw of the posted question with the tally.
extend   a new expiry; the posted question is redrawn.
repost   the question posted again on every route (still one token, one spend);
         each old message is pointed at its route's new one.
finish   a RUNNING run ends once; its outcome is owed, with the final reply's
         journal entries in the same write.
delivered  a deliverer's pass marked, in one write: each post among its rows keeps
         the reference of the message it posted on its question.
set_message_ref  where the question stands posted, whatever its status.
record_cross_scope  an answer from outside the question's scopes, counted on it
         and kept among its latest few, whatever its status.

``close``, ``extend`` and ``repost`` take the admin command's idempotency
key (``once_key``): the step is written with it, once however often the
command is replayed or retried, on whichever replica. So do ``close`` and
``vote`` for an answer's request, and ``note``, its refusal's audit.

Each step's plan (``bot.questions.write``) says what guards it, in which
order: the once-key first, then the question's own guard (an expiry closes
only a question still overdue; an answer checked against a kept copy only
one not yet overdue), and which messages are owed only when the question
names a callback (the webhook). The vote is counted here too: who has
voted is the ballots the unit of work reads under the question's lock,
whether this ballot decides is ``quorum.decided``, and the tally stored is
``quorum.tally_of``.

The process that drives runs binds the lifecycle to itself (``bind``): the
rows its steps owe are born claimed by it and handed to its deliverer, so
it delivers them with no claim query. Unbound (an admin shell), rows are
born unclaimed, for whichever server claims them first. ``observe`` tells
in-process listeners (the API's waiters) of each write that went through,
here, once the unit of work has returned it committed: never from inside
the store's transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot import tracing
from bot.contract.answers import Answer, ApprovalDecision
from bot.questions import posts, quorum
from bot.questions.records import (
    MAX_CROSS_SCOPE_KEPT,
    WEBHOOK_LANE,
    ApiRequest,
    AuditEvent,
    Closing,
    CrossScopeAttempt,
    DeliveryKind,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.questions.write import (
    Attempted,
    Ballot,
    Checkpoint,
    Claim,
    Close,
    Delivered,
    Expiry,
    Marks,
    NewExpiry,
    Nudge,
    Owe,
    Owed,
    Posted,
    PostedBy,
    RunMove,
    StillOpen,
    Tallied,
    UnitOfWork,
    Voted,
    Write,
    Written,
    once_key_at,
)

DEFAULT_CLAIM_SECONDS = 30.0


def _ignore(owed: Sequence[Owed]) -> None:
    del owed


def _posted(done: Delivered) -> AuditEvent:
    """The ``posted`` event of a delivered post: where, and the message it left, if any."""
    posting = done.posting
    assert posting is not None  # only posts are audited as posted
    detail: dict[str, Any] = {"surface": posting.surface}
    if done.message_ref is not None:
        detail["message"] = done.message_ref
    if done.post is not None:
        detail["post"] = done.post
    if posting.repost:
        detail["repost"] = True
    return AuditEvent(done.at, "posted", posting.run_id, posting.interrupt_id, detail=detail)


class Lifecycle:
    """Every change to a question or to its run's progress goes through these steps."""

    def __init__(self, unit: UnitOfWork) -> None:
        self.unit = unit
        self._owner = ""
        self._claim_seconds = DEFAULT_CLAIM_SECONDS
        self._sink: Callable[[Sequence[Owed]], None] = _ignore
        self._observers: list[Callable[[Written], None]] = []

    def bind(
        self,
        *,
        owner: str,
        claim_seconds: float,
        sink: Callable[[Sequence[Owed]], None],
    ) -> None:
        """This process delivers what the steps owe: claim the rows for ``owner``, hand them
        to ``sink`` once written."""
        self._owner = owner
        self._claim_seconds = claim_seconds
        self._sink = sink

    def observe(self, observer: Callable[[Written], None]) -> Callable[[], None]:
        """Call ``observer`` with every write that went through, once it is committed and
        the step has handed on what it owes; the result stops it."""
        self._observers.append(observer)

        def stop() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return stop

    async def start(self, run: RunRecord, *, history: int = 0) -> Written | None:
        """Store a new run, audited; None (nothing written) if its id exists already.

        Surfaces derive a run id from a platform event id, so a retried event
        (or the same event reaching two replicas) starts one run, not two.
        ``history``: read the conversation's latest runs with the write
        (``Written.earlier``), for the run's first turn.
        """
        started = AuditEvent(
            run.created_at,
            "started",
            run.run_id,
            actor=run.requester,
            detail={"surface": run.surface},
        )
        write = Write(run.run_id, run.created_at, new_run=run, history=history, audit=(started,))
        return await self._apply(write)

    async def ask(
        self,
        question: Question,
        *,
        turn_state: Mapping[str, Any] | None = None,
        journal: Mapping[str, Any] | None = None,
    ) -> Written | None:
        """Open ``question`` (None if its id exists already: nothing is written twice)."""
        # A chat agent's question: one trace of its own, even when asked during a resume.
        with tracing.asked(question, own_trace=True) as trace_parent:
            # Copied only for a new traceparent: untraced, the question is kept as it is.
            if trace_parent != question.trace_parent:
                question = dataclasses.replace(question, trace_parent=trace_parent)
            return await self._ask(question, turn_state, journal)

    async def _ask(
        self,
        question: Question,
        turn_state: Mapping[str, Any] | None,
        journal: Mapping[str, Any] | None,
    ) -> Written | None:
        at = question.issued_at
        checkpoint = (
            None
            if turn_state is None
            else Checkpoint(question.checkpoint_id, question.run_id, turn_state)
        )
        paused = AuditEvent(
            at, "paused", question.run_id, question.interrupt_id, detail={"name": question.name}
        )
        write = Write(
            question.run_id,
            at,
            question=question,
            # Nothing is owed the run until an answer, so nobody holds its lease.
            run=RunMove(
                question.run_id, at, status=RunStatus.PAUSED, lease=("", None), resumed=True
            ),
            checkpoint=checkpoint,
            journal=journal or {},
            audit=(paused,),
            owe=(Owe(DeliveryKind.PUBLISH, question.interrupt_id),),
            claim=self._claim(at),
        )
        return await self._apply(write)

    async def ask_remote(
        self, run: RunRecord, question: Question, api: ApiRequest
    ) -> Written | None:
        """Start ``run`` (status REMOTE) and open its one question, owing the post;
        None (nothing written) if the question's id, derived from the idempotency
        key, exists already. Its trace is the current context's (the request's)."""
        route = tracing.route_of(run.surface, run.conversation)
        with tracing.asked(question, route=route) as trace_parent:
            question = dataclasses.replace(question, trace_parent=trace_parent)
            return await self._ask_remote(run, question, api)

    async def _ask_remote(
        self, run: RunRecord, question: Question, api: ApiRequest
    ) -> Written | None:
        at = question.issued_at
        asked = AuditEvent(
            at,
            "asked",
            run.run_id,
            question.interrupt_id,
            actor=run.requester,
            detail={"name": question.name, "surface": run.surface},
        )
        write = Write(
            run.run_id,
            at,
            new_run=run,
            question=question,
            api=api,
            audit=(asked,),
            # One post per route, each delivered (and retried) on its own.
            owe=posts.fanned((Owe(DeliveryKind.PUBLISH, question.interrupt_id),), question),
            claim=self._claim(at),
        )
        return await self._apply(write)

    async def close(
        self,
        interrupt_id: str,
        closing: Closing,
        *,
        once_key: str = "",
        unexpired: bool = False,
        asked: Question | None = None,
    ) -> Written | None:
        """Close an outstanding question; None if it was not outstanding (or, for an
        expiry, no longer overdue). The closer takes the run's lease with the close,
        so no other process's recovery can take the resume in between, and reads
        what the resume reads with it (``Written.turn``). ``asked``: any copy of the
        question, for its posts (which never change); without it they are read."""
        if asked is None:
            asked = await self.unit.question(interrupt_id)
        write = self._close_write(interrupt_id, closing, once_key, asked, unexpired=unexpired)
        started = tracing.now()
        written = await self._apply(write)
        if written is not None and written.question is not None:
            _traced_close(written.question, started)
        return written

    async def vote(self, ballot: Ballot, closing: Closing, *, once_key: str = "") -> Voted:
        """Count ``ballot`` on its outstanding question; the ballot that decides it closes it
        with ``closing`` (its answer replaced by the decision and who made it), any other
        owes a redraw with the new tally. Refused (``written`` None) if the question is
        not outstanding, ``once_key`` is on record, or the voter's ballot on record still
        counts or was cast under another of the same person's ids (``again``; an approval an
        edit set aside is replaced, ``quorum.cast``)."""
        at = ballot.at

        def decide(question: Question, before: tuple[Ballot, ...]) -> Write | None:
            ballots = quorum.cast(before, ballot)
            if ballots is None:
                return None
            decision = quorum.decided(question, ballots)
            tally = quorum.tally_of(ballots, question)
            voted = AuditEvent(
                at,
                "voted",
                question.run_id,
                question.interrupt_id,
                actor=ballot.voter,
                detail={"decision": ballot.decision},
            )
            if decision is None:
                return Write(
                    question.run_id,
                    at,
                    question=Tallied(question.interrupt_id, tally),
                    audit=(voted,),
                    # The tally shown live on every post.
                    owe=posts.fanned((Owe(DeliveryKind.REFRESH, question.interrupt_id),), question),
                    claim=self._claim(at),
                    once_key=once_key_at(once_key, at),
                )
            answer = quorum.final_answer(decision, ballots, ballot)
            close = self._close_write(
                question.interrupt_id,
                dataclasses.replace(
                    closing, answer=answer, by=quorum.decided_by(decision, ballots)
                ),
                once_key,
                question,
            )
            assert isinstance(close.question, Close)  # what ``_close_write`` writes
            closed = dataclasses.replace(close.question, tally=tally)
            return dataclasses.replace(close, question=closed, audit=(voted, *close.audit))

        started = tracing.now()
        voted = await self.unit.vote(ballot, decide)
        if voted.written is not None:
            self._told(voted.written)
            question = voted.written.question
            if question is not None:
                closed = question.status is not QuestionStatus.OUTSTANDING
                tracing.record("question.vote", question, started, vote_decided=closed)
                if closed:
                    _traced_close(question, started)
        return voted

    def _close_write(
        self,
        interrupt_id: str,
        closing: Closing,
        once_key: str,
        asked: Question | None,
        *,
        unexpired: bool = False,
    ) -> Write:
        at = closing.at
        lease = (closing.lease_owner, closing.lease_until) if closing.lease_owner else ("", None)
        # An expiry closes only a question still overdue: an admin may have extended it
        # since the sweeper listed it. An answer checked against a copy kept since its
        # asking closes only one not yet overdue: the copy's expiry may be stale.
        expiry = Expiry.ANY
        if closing.status is QuestionStatus.EXPIRED:
            expiry = Expiry.OVERDUE
        elif unexpired:
            expiry = Expiry.UNEXPIRED
        close = Close(
            interrupt_id,
            closing.status,
            at,
            by=closing.by,
            by_id=closing.by_id,
            answer=closing.answer,
            expiry=expiry,
            with_turn=bool(closing.lease_owner),
        )
        # The run id comes back with the closed row; the write fills it in.
        return Write(
            "",
            at,
            question=close,
            # Only a PAUSED run is moved on (a test may close a question of a run
            # that is elsewhere in its life).
            run=RunMove("", at, status=RunStatus.RUNNING, only_if=RunStatus.PAUSED, lease=lease),
            audit=(
                AuditEvent(
                    at,
                    str(closing.status),
                    "",
                    interrupt_id,
                    closing.by_id or closing.by,
                    _decision_detail(closing.answer),
                ),
            ),
            # Every posted message is edited to its closed form. The webhook, in its
            # own lane, is owed only if the question names a callback.
            owe=posts.fanned(
                (
                    Owe(DeliveryKind.CLOSED, interrupt_id),
                    Owe(
                        DeliveryKind.WEBHOOK,
                        interrupt_id,
                        surface=WEBHOOK_LANE,
                        only_with_callback=True,
                    ),
                ),
                asked,
            ),
            claim=Claim(closing.lease_owner, closing.lease_until or at)
            if closing.lease_owner
            else self._claim(at),
            once_key=once_key_at(once_key, at),
        )

    async def nudge(
        self, question: Question, *, at: float, level: int, body: Mapping[str, Any]
    ) -> Written | None:
        """Count a reminder (``level`` unchanged) or the escalation step to ``level``, owing
        its threaded message (``body``); None if it was counted already or the question
        is closed."""
        escalated = level > question.level
        was = (question.reminders, question.level)
        now = (question.reminders + (0 if escalated else 1), level)
        kind = "escalated" if escalated else "reminded"
        ping = Owe(
            DeliveryKind.NUDGE, question.interrupt_id, {"kind": kind, "level": level, **body}
        )
        redraw = (Owe(DeliveryKind.REFRESH, question.interrupt_id),) if escalated else ()
        event = AuditEvent(
            at, kind, question.run_id, question.interrupt_id, detail={"level": level, **body}
        )
        write = Write(
            question.run_id,
            at,
            question=Nudge(
                question.interrupt_id,
                was,
                now,
                quorum.nudge_due_at(
                    question.policy, question.issued_at, reminders=now[0], level=now[1]
                ),
            ),
            audit=(event,),
            # Threaded on every posted message; a step redraws them with the level.
            owe=posts.fanned((ping, *redraw), question),
            claim=self._claim(at),
        )
        return await self._apply(write)

    async def extend(
        self, question: Question, *, expires_at: float, at: float, actor: str, once_key: str = ""
    ) -> Written | None:
        """Move an outstanding question's expiry; None if it is no longer outstanding."""
        detail = {"from": question.expires_at, "to": expires_at}
        write = Write(
            question.run_id,
            at,
            question=NewExpiry(question.interrupt_id, expires_at),
            audit=(
                AuditEvent(at, "extended", question.run_id, question.interrupt_id, actor, detail),
            ),
            owe=posts.fanned((Owe(DeliveryKind.REFRESH, question.interrupt_id),), question),
            claim=self._claim(at),
            once_key=once_key_at(once_key, at),
        )
        return await self._apply(write)

    async def repost(
        self, question: Question, *, at: float, actor: str, once_key: str = ""
    ) -> Written | None:
        """Owe a second post of an outstanding question on each route, and for each message
        it stands posted as an edit pointing at the new one; None if it is no longer
        outstanding."""
        previous = question.message_ref
        # Posted again on every route; every old message then points to its route's new one
        # (each edit after its route's post, in its surface's order).
        publish = Owe(DeliveryKind.PUBLISH, question.interrupt_id, {"repost": True})
        owe = (*posts.fanned((publish,), question), *posts.moves(question))
        resent = AuditEvent(
            at, "resent", question.run_id, question.interrupt_id, actor, {"from": previous}
        )
        write = Write(
            question.run_id,
            at,
            question=StillOpen(question.interrupt_id),
            audit=(resent,),
            owe=owe,
            claim=self._claim(at),
            once_key=once_key_at(once_key, at),
        )
        return await self._apply(write)

    async def finish(
        self,
        run_id: str,
        status: RunStatus,
        *,
        at: float,
        text: str,
        failed: bool = False,
        journal: Mapping[str, Any] | None = None,
    ) -> bool:
        """End a RUNNING run, once; False (nothing written) if it was not RUNNING."""
        kind = "failed" if failed else "completed"
        write = Write(
            run_id,
            at,
            run=RunMove(
                run_id,
                at,
                status=status,
                only_if=RunStatus.RUNNING,
                required=True,
                lease=("", None),
                final_text=text,
                resumed=True,
            ),
            journal=journal or {},
            audit=(AuditEvent(at, kind, run_id),),
            owe=(Owe(DeliveryKind.OUTCOME, body={"text": text, "failed": failed}),),
            claim=self._claim(at),
        )
        return await self._apply(write) is not None

    async def note(self, event: AuditEvent, *, once_key: str) -> bool:
        """Audit ``event`` with ``once_key``; False, nothing written, if the key is on record."""
        write = Write(
            event.run_id, event.at, audit=(event,), once_key=once_key_at(once_key, event.at)
        )
        return await self._apply(write) is not None

    async def delivered(self, done: Sequence[Delivered]) -> None:
        """Mark the rows delivered, in one write; a post among them keeps the reference of
        the message it posted on its question (the first route's, or that further post's),
        whatever the question's status: an edit owed by a close still needs it."""
        if not done:
            return
        posted = tuple(
            PostedBy(d.delivery_id, d.message_ref, d.post)
            for d in done
            if d.message_ref is not None
        )
        # Each post that put a question in front of people is on record, with its mark:
        # an event whenever the row is marked, none for a row a crash leaves to deliver again.
        audit = tuple(_posted(d) for d in done if d.posting is not None)
        write = Write("", max(d.at for d in done), marks=Marks(tuple(done), posted), audit=audit)
        await self._apply(write)

    async def set_message_ref(
        self, interrupt_id: str, ref: Mapping[str, Any], *, at: float
    ) -> None:
        """Keep where the question stands posted on its first route, whatever its status;
        KeyError if there is no such question."""
        write = Write("", at, question=Posted(interrupt_id, dict(ref)))
        if await self._apply(write) is None:
            raise KeyError(interrupt_id)

    async def record_cross_scope(
        self, interrupt_id: str, attempt: CrossScopeAttempt, *, at: float
    ) -> None:
        """Count an answer from outside the question's scopes, whatever its status, keeping
        the latest ``MAX_CROSS_SCOPE_KEPT`` attempts (a row someone keeps answering from
        elsewhere must not grow without limit); KeyError if there is no such question."""
        change = Attempted(interrupt_id, attempt, MAX_CROSS_SCOPE_KEPT)
        if await self._apply(Write("", at, question=change)) is None:
            raise KeyError(interrupt_id)

    def _claim(self, at: float) -> Claim | None:
        return Claim(self._owner, at + self._claim_seconds) if self._owner else None

    async def _apply(self, write: Write) -> Written | None:
        written = await self.unit.apply(write)
        if written is None:
            return None
        self._told(written)
        return written

    def _told(self, written: Written) -> None:
        if written.owed:
            self._sink(written.owed)
        for observer in self._observers:
            observer(written)


def _traced_close(question: Question, started: int) -> None:
    """An answer's span (when a person's answer closed it), then the close's."""
    if question.status is QuestionStatus.ANSWERED and question.tally is None:
        tracing.record("question.answer", question, started)
    tracing.record("question.closed", question, started)


def _decision_detail(answer: Answer | None) -> dict[str, Any]:
    """What the audit keeps of an approval's answer beyond who gave it: an edit's original
    and edited arguments, a response's message (each as the answer holds it, if it does)."""
    if not isinstance(answer, ApprovalDecision):
        return {}
    keep: tuple[str, ...]
    match answer.decision:
        case "edit":
            keep = ("decision", "original_arguments", "arguments")
        case "respond":
            keep = ("decision", "message")
        case _:
            return {}
    given = answer.model_fields_set
    return {key: getattr(answer, key) for key in keep if key in given}
