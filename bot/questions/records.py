"""The rows the stores keep: runs, issued pauses, audit events."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.contract.answers import Answer, CancelReason
from bot.contract.identity import email_address
from bot.contract.models import Policy, Tally
from bot.contract.payloads import Payload


class QuestionStatus(StrEnum):
    """Where a question stands; only OUTSTANDING can still be answered."""

    OUTSTANDING = "outstanding"
    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


MAX_CROSS_SCOPE_KEPT = 5


@dataclass(frozen=True, slots=True)
class CrossScopeAttempt:
    """An answer that came from outside the question's scopes: from where, by whom, when."""

    scope: str
    responder: str
    at: float

    @classmethod
    def stored(cls, value: Any) -> CrossScopeAttempt:
        """One attempt as its row holds it (a JSON object), parsed once."""
        return cls(str(value["scope"]), str(value["responder"]), float(value["at"]))

    def to_json(self) -> dict[str, Any]:
        """The attempt as its row holds it."""
        return {"scope": self.scope, "responder": self.responder, "at": self.at}


@dataclass(frozen=True, slots=True)
class Post:
    """A further post of a question asked on several routes (``bot.questions.posts``): the
    route as given, its surface, the scope an answer from there carries, the conversation to
    post in (the surface's, never read here), and its message once posted."""

    route: str
    surface: str
    scope: str
    conversation: dict[str, Any]
    message_ref: dict[str, Any] | None = None

    @classmethod
    def stored(cls, value: Any) -> Post:
        """One post as the question's row holds it (a JSON object), parsed once."""
        return cls(
            route=str(value["route"]),
            surface=str(value["surface"]),
            scope=str(value["scope"]),
            conversation=dict(value.get("conversation") or {}),
            message_ref=value.get("message_ref"),
        )

    def to_json(self) -> dict[str, Any]:
        """The post as the question's row holds it."""
        return {
            "route": self.route,
            "surface": self.surface,
            "scope": self.scope,
            "conversation": self.conversation,
            "message_ref": self.message_ref,
        }


class RunStatus(StrEnum):
    """RUNNING means work is owed (a first turn or a resume); PAUSED waits on a person."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    # An agent outside the bridge (the agents API) drives it: the bridge only
    # carries its questions, so a close owes no resume.
    REMOTE = "remote"


@dataclass(frozen=True, slots=True)
class Question:
    """The bridge's record of a question asked of a person, and how it ended (one row).

    ``resumed_at`` stays None until the run has been continued after the
    pause closed; a closed, unresumed row is work the recovery pass owes.
    """

    interrupt_id: str
    run_id: str
    scope: str
    name: str
    tool_call_id: str
    checkpoint_id: str
    # What it asks, parsed by its name (``bot.contract.payloads.payload_of``).
    payload: Payload
    issued_at: float
    expires_at: float
    root_run_id: str = ""
    session_id: str = ""
    thread_id: str = ""
    status: QuestionStatus = QuestionStatus.OUTSTANDING
    # How it ended, parsed by its name and status (``bot.contract.answers.answer_of``).
    answer: Answer | None = None
    closed_by: str = ""
    closed_at: float | None = None
    resumed_at: float | None = None
    message_ref: dict[str, Any] | None = None
    # The last few attempts only (``MAX_CROSS_SCOPE_KEPT``), and how many in all:
    # a row someone keeps answering from elsewhere must not grow without limit.
    cross_scope_attempts: tuple[CrossScopeAttempt, ...] = ()
    cross_scope_count: int = 0
    # Who closed it as the platform authenticated them (``closed_by`` is the display name).
    closed_by_id: str = ""
    # Who may answer, when the asker named them (an API question's ``answerers``);
    # empty: the deployment's rule for the interaction (``bot.service.answering.policy``).
    answerers: tuple[str, ...] = ()
    # The question's policy, defaults filled (stored as its JSON, read by
    # ``bot.questions.quorum.stored_policy``); None: the default, one answer decides.
    policy: Policy | None = None
    # The votes counted so far under a quorum (read by ``bot.questions.quorum.stored_tally``);
    # None before the first.
    tally: Tally | None = None
    # Escalation steps taken, and reminders posted (the sweeper's, ``bot.service``).
    level: int = 0
    reminders: int = 0
    # Its further posts when it was asked on several routes (``bot.questions.posts``).
    posts: tuple[Post, ...] = ()
    # The W3C traceparent of the span that asked it (``bot.tracing``): each later step
    # is a span of that trace. '' when it was asked with tracing off.
    trace_parent: str = ""

    @property
    def cancel_reason(self) -> str:
        """Why it was cancelled (an admin's words, a failed post's sentence); '' for none."""
        answer = self.answer
        if self.status is not QuestionStatus.CANCELLED or not isinstance(answer, CancelReason):
            return ""
        return answer.reason

    @property
    def resumes_a_turn(self) -> bool:
        """A kernel turn waits on it; an API question's agent waits elsewhere."""
        return bool(self.checkpoint_id)


@dataclass(frozen=True, slots=True)
class Closing:
    """How an outstanding pause ends: answered, expired or cancelled, by whom."""

    status: QuestionStatus
    by: str
    at: float
    # Typed as the question will hold it: the lifecycle and the store write it as it is.
    answer: Answer | None = None
    by_id: str = ""
    # The process that will resume the run takes its lease in the same write,
    # so no other process's recovery can take it in between.
    lease_owner: str = ""
    lease_until: float | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run started from a chat message, and where to post about it."""

    run_id: str
    scope: str
    surface: str
    requester: str
    text: str
    created_at: float
    conversation: dict[str, Any] = field(default_factory=dict)
    status: RunStatus = RunStatus.RUNNING
    updated_at: float = 0.0
    final_text: str = ""
    # Which process drives the run until when; see ``Leases``.
    lease_owner: str = ""
    lease_until: float | None = None
    # The surface's reason when something it owed could not be delivered.
    delivery_error: str = ""


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """An append-only record of something that happened to a run or pause."""

    at: float
    kind: str
    run_id: str = ""
    interrupt_id: str = ""
    actor: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One conversation of a surface, for a list: its first words and last activity."""

    key: str
    title: str
    updated_at: float
    runs: int


class DeliveryKind(StrEnum):
    """What a surface owes a person."""

    PUBLISH = "publish"  # post the question
    CLOSED = "closed"  # edit the posted question to its outcome
    OUTCOME = "outcome"  # post the run's final text in its thread
    # Admin commands (``bot.admin``): a question posted again leaves its old
    # message pointing at the new one; an extended question is redrawn
    # (its new expiry, and the token re-derived with it).
    MOVED = "moved"  # edit an earlier message of the question to point to the latest
    REFRESH = "refresh"  # redraw the posted question in place

    # A question asked over the agents API that names a ``callback_url``: the
    # signed event of its close. Owed with every close; the backend writes it
    # only for a question that has a callback.
    WEBHOOK = "webhook"

    # An approval policy's sweeper (``bot.service.delivering.nudges``): a threaded message that
    # reminds who may answer, or pings an escalation step's answerers.
    NUDGE = "nudge"


# The outbox surface of a close's webhook: a lane of its own, since rows go out in order
# per run and surface, so a retrying edit of the message never holds the agent's event back.
WEBHOOK_LANE = "webhook"


class DeliveryState(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One outbox row: written with the state change that owes it, delivered later.

    ``body`` carries what the state change knew (the outcome text); the rest
    is read from the ledger and the run at delivery time, so a redelivery
    always shows the current truth. A row handed over in memory
    (``bot.service.delivering.owed``) brings its question as the owing write left it
    in ``pause``, so its first delivery reads nothing.
    """

    delivery_id: int
    run_id: str
    surface: str
    kind: DeliveryKind
    interrupt_id: str = ""
    body: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    state: DeliveryState = DeliveryState.PENDING
    next_at: float = 0.0
    last_error: str = ""
    # Set by ``claim``: another row of the run was pending behind this one, so
    # delivering this one makes that one due (a hint; its own change kicked too).
    followed: bool = False
    # Set only on a row handed over by the write that owed it.
    pause: Question | None = None


@dataclass(frozen=True, slots=True)
class ApiRequest:
    """The ``/v1`` request that asked a question: which key asked, and how to answer back.

    ``body_hash`` is the request's fingerprint: the same ``idempotency_key``
    with another body is a conflict, not the same question. The question
    belongs to ``key_id``; ``key_name`` is only what that key was called.
    """

    interrupt_id: str
    key_name: str
    idempotency_key: str
    body_hash: str
    kind: str
    created_at: float
    callback_url: str | None = None
    metadata: dict[str, Any] | None = None
    run_ref: str | None = None
    # The asking key's stable id (``ApiKey.key_id``): whose question this is.
    key_id: str = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A key agents sign in to the API with: only its hash is kept, and the routes it may use.

    A route is ``surface:conversation``, ``surface:*`` or ``*`` (every route).
    ``key_id`` is who the key is: its questions, idempotency keys and rate
    belong to it, so a later key given the same name starts with nothing.
    """

    name: str
    key_hash: str
    routes: tuple[str, ...]
    created_at: float = 0.0
    # Questions it may create a minute; None: the deployment's BOT_API_CREATES_PER_MINUTE.
    creates_per_minute: int | None = None
    key_id: str = field(kw_only=True)

    def may_use(self, surface: str, conversation: str) -> bool:
        wanted = {"*", f"{surface}:*", f"{surface}:{conversation}"}
        if surface == "email":
            # One inbox, one spelling: a key's address and a request's compare as addresses.
            wanted.add(f"email:{email_address(conversation) or conversation}")
            return any(_as_address(route) in wanted for route in self.routes)
        return any(route in wanted for route in self.routes)


def _as_address(route: str) -> str:
    """An ``email:<address>`` route in its one spelling (a key made before keys were
    checked may hold another); any other route as it is."""
    surface, _, conversation = route.partition(":")
    address = email_address(conversation) if surface == "email" else None
    return f"email:{address}" if address is not None else route


@dataclass(frozen=True, slots=True)
class ApiView:
    """What a ``/v1`` question object is drawn from, read in one statement: the question,
    the request that asked it, and its run (where it went, and the surface's sentence if it
    could not be posted)."""

    request: ApiRequest
    question: Question
    run: RunRecord


@dataclass(frozen=True, slots=True)
class PendingFilter:
    """What ``pending`` narrows to; None matches everything."""

    scope: str | None = None
    requester: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class QuestionStats:
    """Counters over every question the store has issued, computed by the store."""

    issued: int
    outstanding: int
    answered: int
    expired: int
    cancelled: int
    refusals: dict[str, int]
    # Nearest-rank percentiles of closed_at - issued_at over answered questions,
    # as the lower bound of their ``answer_bucket``.
    answer_seconds_p50: float | None
    answer_seconds_p90: float | None
    deliveries_failed: int
    deliveries_retrying: int
    # Escalation steps taken, over every question (a policy's ``escalate``).
    escalations: int = 0


def nearest_rank(count: int, fraction: float) -> int:
    """The 0-based position of the nearest-rank percentile among ``count`` sorted values."""
    return max(0, math.ceil(count * fraction) - 1)


def answer_bucket(seconds: float) -> float:
    """The histogram bucket (its lower bound) a time to answer is counted in.

    Exact to the second under an hour, the minute under a day, then the
    hour: percentiles read from counters rather than from every row.
    Migration 6 spells the same function in SQL.
    """
    seconds = max(seconds, 0.0)
    if seconds < 3600:
        return float(int(seconds))
    if seconds < 86400:
        return float(int(seconds / 60) * 60)
    return float(int(seconds / 3600) * 3600)
