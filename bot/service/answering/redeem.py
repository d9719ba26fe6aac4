"""Redeeming an answer: every check, in order, before the one atomic spend.

The order is the contract (docs/architecture.md, "Redeeming"): token,
ledger row, scope, person, answer, spend. Every refusal returns before the
spend, so a refused answer never costs the person their token.

An answer may come with its request's idempotency key (``once_key``: a
Slack click, whose replay may reach any replica): the key is written with
whatever the request did, the spend, the vote or the refusal's audit, in
that one write, and a request whose key is on record already is
``Replayed``: nothing is written again and nobody is told twice. A
``retryable`` request's key (the link page's form, which a person sends
again after correcting a typo) is written only with the spend or the vote:
its refusal is audited without it, so the corrected answer is checked anew.
"""

from __future__ import annotations

import dataclasses
import logging
import traceback
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from bot.contract.answers import ANSWERED, ApprovalDecision, answer_of
from bot.contract.json_values import FINITE, first_unkept_number
from bot.contract.models import Tally
from bot.contract.payloads import payload_json
from bot.human.capability import AnswerValidationError, HumanInteractionCapability
from bot.human.pause_event import claims_for
from bot.human.tokens import TokenClaims, TokenError, TokenExpiredError
from bot.questions import posts, quorum
from bot.questions.records import (
    AuditEvent,
    Closing,
    CrossScopeAttempt,
    Question,
    QuestionStatus,
)
from bot.questions.write import Ballot, TurnToResume
from bot.service.answering import outcomes
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import RequesterOrApprovers, requester_of_run
from bot.service.running import run_events
from bot.service.running.capability_ports import LifecyclePorts, lifecycle_of
from bot.service.running.known import KnownQuestions, KnownRuns
from bot.stores.ports import Stores

log = logging.getLogger(__name__)


class Redeemer:
    """Turns (token, answer, who, scope) into Redeemed or a typed refusal."""

    def __init__(
        self,
        *,
        capability: HumanInteractionCapability,
        stores: Stores,
        policy: RequesterOrApprovers,
        clock: Callable[[], float],
        lease_owner: str = "",
        lease_seconds: float = 0.0,
        known: KnownRuns | None = None,
    ) -> None:
        self._capability = capability
        self._stores = stores
        self._policy = policy
        self._clock = clock
        # Who resumes what this redeemer closes: it takes the run's lease with the spend.
        self._lease_owner = lease_owner
        self._lease_seconds = lease_seconds
        # The policy reads only who started the run, which never changes.
        self._known = known or KnownRuns(stores.runs)
        # The questions this process asked (fed by the lifecycle's writes: ``asked.saw``),
        # checked without reading them; only with the lifecycle's close, which returns
        # the row as it closed it.
        self.asked = KnownQuestions()
        self._quick = isinstance(capability.consumption, LifecyclePorts)
        # Where a refused attempt is recorded: the capability's lifecycle, as the spend.
        self._lifecycle = lifecycle_of(capability, stores)

    @property
    def keeps_request_keys(self) -> bool:
        """A ``once_key`` is written with the request's outcome (the lifecycle's steps);
        without them it is ignored."""
        return self._quick

    async def redeem(
        self,
        token: str,
        answer: Mapping[str, Any],
        *,
        responder: Responder,
        scope: str,
        once_key: str = "",
        retryable: bool = False,
    ) -> outcomes.RedeemOutcome:
        now = self._clock()
        once_key = once_key if self._quick else ""
        keys = _Keys(once_key, retryable=retryable)
        refused = partial(self._refused, keys=keys)
        decode = self._capability.decode_token
        if decode is None:
            # Composition fault: without the capability's reader no pause can
            # be redeemed, and reading around it would skip the deployment's choice.
            log.error("the human-interaction capability has no decode_token; cannot redeem")
            return await refused(outcomes.TokenInvalid(), None, responder)
        try:
            claims = decode(token)
        except TokenExpiredError:
            return await refused(outcomes.TokenExpired(), None, responder)
        except TokenError:
            return await refused(outcomes.TokenInvalid(), None, responder)
        except Exception as error:  # noqa: BLE001 - any crash of the reader is a refusal
            # A reader that crashes on what a stranger sent is still a refusal
            # to that stranger; the log says which reader to fix. Its message
            # and traceback are not logged: they may quote what was sent.
            where = traceback.extract_tb(error.__traceback__)[-1]
            log.error(
                "the capability's reader raised %s at %s:%s instead of refusing; fix the reader",
                type(error).__name__,
                where.filename,
                where.lineno,
            )
            return await refused(outcomes.TokenInvalid(), None, responder)
        try:
            return await self._redeem_claims(claims, answer, responder, scope, now, keys)
        except Exception:
            log.exception("redeem failed in the store", extra={"interrupt_id": claims.jti})
            return outcomes.StoreUnavailable()

    async def _redeem_claims(
        self,
        claims: TokenClaims,
        answer: Mapping[str, Any],
        responder: Responder,
        scope: str,
        now: float,
        keys: _Keys,
    ) -> outcomes.RedeemOutcome:
        checked = partial(self._checked, claims=claims, answer=answer, responder=responder)
        asked = self.asked.get(claims.jti) if self._quick else None
        if asked is not None:
            # Checked as this process asked it; anything else reads the row below.
            quick = await checked(asked, scope=scope, now=now, keys=keys, known=True)
            if quick is not None:
                return quick
            self.asked.forget(claims.jti)
        record = await self._stores.ledger.get(claims.jti)
        outcome = await checked(record, scope=scope, now=now, keys=keys, known=False)
        assert outcome is not None  # only a known question's checks give up
        return outcome

    async def _checked(
        self,
        record: Question | None,
        *,
        claims: TokenClaims,
        answer: Mapping[str, Any],
        responder: Responder,
        scope: str,
        now: float,
        keys: _Keys,
        known: bool,
    ) -> outcomes.RedeemOutcome | None:
        """Every check, then the spend. ``known``: ``record`` is as this process asked it
        (``KnownQuestions``), not read now: any refusal, or a refused spend, gives up (None)
        with nothing written, for the caller to read the row and check it again."""
        once_key = keys.once_key
        refused = partial(self._refused, keys=keys)
        refuse = _give_up if known else refused
        if record is None or record.run_id != claims.sub or record.tool_call_id != claims.call:
            return await refuse(outcomes.TokenInvalid(), None, responder)
        if claims.args and claims.args != claims_for(record).args:
            # The token names the arguments it was minted for: an answer is about those,
            # and an edit is measured against them, never against others in their place.
            return await refuse(outcomes.TokenInvalid(), record, responder)
        closed = _closed_refusal(record)
        if closed is not None:
            return await refuse(closed, record, responder)
        if record.expires_at <= now:
            # The row decides, not the token's exp alone: the two agree when
            # issued, but only the row is ours to shorten (and it is what the
            # sweeper reads), so an answer after it is refused even if the
            # sweeper has not closed the row yet (a known question's spend checks the
            # row's expiry itself).
            return await refuse(outcomes.TokenExpired(record.expires_at), record, responder)
        registration = self._capability.registration(record.name)
        if registration is None:
            return await refuse(outcomes.TokenInvalid(), record, responder)
        if scope != record.scope and scope not in posts.scopes_of(record):
            if known:
                return None  # the attempt is recorded with the row read
            if once_key and await self._stores.replays.applied(once_key):
                return _replayed(record)  # its attempt is on record already
            # Recorded whether or not it is allowed: the ledger is where an
            # admin finds out that answers arrive from elsewhere.
            attempt = CrossScopeAttempt(scope, responder.id, now)
            await self._lifecycle.record_cross_scope(record.interrupt_id, attempt, at=now)
            if not registration.cross_scope_allowed:
                return await refused(outcomes.ScopeMismatch(), record, responder)
        run = await self._known.origin(record.run_id)
        # Before the answerers' rule: an admin who asked is still the one who asked.
        if quorum.is_self_answer(record, run, responder.id):
            return await refuse(outcomes.SelfApproval(), record, responder)
        may = self._policy.who_may_answer(record, requester_of_run(run))
        if not await self._policy.admits(may, responder):
            return await refuse(outcomes.NotAllowedToAnswer(may), record, responder)
        try:
            # The seeds' registration takes the payload as the JSON it was asked with.
            clean = registration.validate_answer(answer, payload_json(record.payload))
        except AnswerValidationError as invalid:
            return await refuse(outcomes.AnswerInvalid(invalid.fields), record, responder)
        unkept = first_unkept_number(answer)
        if unkept is not None:
            # Taken by an interaction's model, whose JSON dump would store null in its place.
            fields = {unkept or "answer": FINITE}
            return await refuse(outcomes.AnswerInvalid(fields), record, responder)
        # Parsed once, here: the close writes it, and the row it returns holds it again.
        typed = answer_of(record.name, ANSWERED, clean)
        assert typed is not None  # a registration's answer is a JSON object
        closing = Closing(
            QuestionStatus.ANSWERED,
            by=responder.display,
            at=now,
            answer=typed,
            by_id=responder.id,
            lease_owner=self._lease_owner,
            lease_until=now + self._lease_seconds if self._lease_owner else None,
        )
        consumption = self._capability.consumption
        turn: TurnToResume | None = None
        if (
            quorum.counts_votes(record, typed)
            and isinstance(typed, ApprovalDecision)
            and isinstance(consumption, LifecyclePorts)
        ):
            if known:
                return None  # a vote is counted on the row, never on a kept copy
            ballot = Ballot(
                record.interrupt_id,
                voter=responder.id,
                display=responder.display,
                decision=typed.decision,
                answer=typed,
                at=now,
            )
            voted = await consumption.lifecycle.vote(ballot, closing, once_key=once_key)
            if voted.again:
                return await refused(outcomes.AlreadyVoted(), record, responder)
            written = voted.written
            answered = written.question if written is not None else None
            if answered is not None and answered.status is QuestionStatus.OUTSTANDING:
                return _counted(answered, ballot.decision)
            if answered is not None and written is not None:
                typed, turn = answered.answer or typed, written.turn
        else:
            spent = await self._spend(record, closing, unexpired=known, once_key=once_key)
            if spent is None and known:
                return None
            answered, turn = spent if spent is not None else (None, None)
        if answered is None:
            # Lost a race (perhaps to this very request: then its key says so): whoever
            # won has closed the row by now.
            latest = await self._stores.ledger.get(record.interrupt_id)
            lost = _closed_refusal(latest) if latest is not None else None
            return await refused(lost or outcomes.TokenInvalid(), record, responder)
        # The spend audited the answer in its own write.
        run_events.answered(record.run_id, record.interrupt_id, by=responder.display)
        return outcomes.Redeemed(
            record.interrupt_id, record.run_id, responder.display, typed, now, answered, run, turn
        )

    async def _spend(
        self, record: Question, closing: Closing, *, unexpired: bool, once_key: str
    ) -> tuple[Question, TurnToResume | None] | None:
        """Spend through the capability's consumption; the row as the spend closed it, and
        the turn it resumes if the spend read it. ``unexpired``: the row's expiry is checked
        by the spend itself (``record`` is a kept copy)."""
        consumption = self._capability.consumption
        if isinstance(consumption, LifecyclePorts):
            # The lifecycle's close returns the closed row and the turn: nothing to read again.
            lifecycle = consumption.lifecycle
            written = await lifecycle.close(
                record.interrupt_id, closing, once_key=once_key, unexpired=unexpired, asked=record
            )
            if written is None or written.question is None:
                return None
            return written.question, written.turn
        if not await consumption.spend(record.interrupt_id, closing):
            return None
        closed = dataclasses.replace(
            record,
            status=closing.status,
            answer=closing.answer,
            closed_by=closing.by,
            closed_by_id=closing.by_id,
            closed_at=closing.at,
        )
        return closed, None

    async def _refused(
        self,
        refusal: outcomes.Refusal,
        record: Question | None,
        responder: Responder,
        *,
        keys: _Keys,
    ) -> outcomes.Refusal:
        """Audit the refusal, with the request's key if it has one: the key on record
        already means this request was dealt with before, and it is ``Replayed``. A
        retryable request's key is only looked up: its refusal leaves the key unused."""
        once_key = keys.once_key
        reason = type(refusal).__name__
        event = AuditEvent(
            at=self._clock(),
            kind="refused",
            run_id=record.run_id if record else "",
            interrupt_id=record.interrupt_id if record else "",
            actor=responder.id,
            detail={"reason": reason},
        )
        try:
            consumption = self._capability.consumption
            if once_key and isinstance(consumption, LifecyclePorts) and not keys.retryable:
                if not await consumption.lifecycle.note(event, once_key=once_key):
                    return _replayed(record)
            elif once_key and keys.retryable and await self._stores.replays.applied(once_key):
                return _replayed(record)
            else:
                await self._stores.audit.append(event)
        except Exception:
            log.warning("could not audit a refusal", exc_info=True)
        run_events.refused(record, reason=reason, by=responder.id)
        return refusal


@dataclasses.dataclass(frozen=True, slots=True)
class _Keys:
    """A request's idempotency key (blank for none), and whether a refusal leaves it unused."""

    once_key: str
    retryable: bool = False


async def _give_up(
    refusal: outcomes.Refusal, record: Question | None, responder: Responder
) -> None:
    """A known question's refusal: nothing audited, the row is read and checked instead."""
    del refusal, record, responder


def _replayed(record: Question | None) -> outcomes.Replayed:
    extra = {"interrupt_id": record.interrupt_id} if record else {}
    log.info("an answer's request seen before (a replay); nothing recorded", extra=extra)
    return outcomes.Replayed()


def _counted(question: Question, decision: str) -> outcomes.Counted:
    tally = question.tally or Tally()
    k = quorum.policy_of(question).quorum
    return outcomes.Counted(
        decision, len(tally.approve), len(tally.reject), k, tally.changes, tally.restarted
    )


def _closed_refusal(record: Question) -> outcomes.Refusal | None:
    at = record.closed_at or 0.0
    match record.status:
        case QuestionStatus.OUTSTANDING:
            return None
        case QuestionStatus.ANSWERED:
            return outcomes.AlreadyAnswered(record.closed_by, at)
        case QuestionStatus.EXPIRED:
            return outcomes.TokenExpired(at)
        case QuestionStatus.CANCELLED:
            return outcomes.AlreadyCancelled(record.closed_by, at)
