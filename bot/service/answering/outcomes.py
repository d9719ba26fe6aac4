"""What redeeming an answer can come to: one success, or one typed refusal.

No refusal spends the token; each carries what the person needs to hear.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.contract.answers import Answer
from bot.errors import BotError
from bot.questions.quorum import MayAnswer
from bot.questions.records import Question, RunRecord
from bot.questions.write import TurnToResume


class NotStarted(BotError):
    """A new message's run could not be stored (full disk, read-only store): nothing started."""


class ChatsOff(NotStarted):
    """The bridge runs no chat agent (``BOT_AGENT=none``): a chat message starts nothing."""


@dataclass(frozen=True, slots=True)
class TokenInvalid:
    """Forged, tampered, truncated, unknown key, or not a token at all."""


@dataclass(frozen=True, slots=True)
class TokenExpired:
    expired_at: float | None = None


@dataclass(frozen=True, slots=True)
class AlreadyAnswered:
    by: str
    at: float


@dataclass(frozen=True, slots=True)
class AlreadyCancelled:
    by: str
    at: float


@dataclass(frozen=True, slots=True)
class ScopeMismatch:
    """Answered from another scope (channel or chat, workspace or tenant) than the one asked in."""


@dataclass(frozen=True, slots=True)
class NotAllowedToAnswer:
    """The person is not among those who may answer this question: ``may`` says who may
    (None where a surface refuses before the policy is asked)."""

    may: MayAnswer | None = None


@dataclass(frozen=True, slots=True)
class AnswerInvalid:
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SelfApproval:
    """The policy keeps the requester from answering, and this person is the requester."""


@dataclass(frozen=True, slots=True)
class AlreadyVoted:
    """Under a quorum, this person has answered the question already; nothing changed."""


@dataclass(frozen=True, slots=True)
class Counted:
    """Not a refusal: the answer is counted toward a quorum, and the question stays open.

    In the union beside the refusals because, like them, it resumes nothing
    and the person hears one sentence (``bot.service.delivering.messages``).
    """

    decision: str
    approvals: int
    rejections: int
    quorum: int
    # Under an edited proposal: what it changes ("env prod → staging").
    changes: str = ""
    # This ballot's edit was a new proposal: the approvals before it no longer count.
    restarted: bool = False


@dataclass(frozen=True, slots=True)
class StoreUnavailable:
    """The store failed before the spend committed; nothing changed."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """Not a refusal: the same request again (its idempotency key is on record, written
    with its first outcome), so nothing is recorded this time and nobody is told twice.

    In the union beside the refusals because, like them, it resumes nothing.
    """


Refusal = (
    TokenInvalid
    | TokenExpired
    | AlreadyAnswered
    | AlreadyCancelled
    | ScopeMismatch
    | NotAllowedToAnswer
    | AnswerInvalid
    | StoreUnavailable
    | SelfApproval
    | AlreadyVoted
    | Counted
    | Replayed
)


@dataclass(frozen=True, slots=True)
class Redeemed:
    """The token is spent, the answer stored, and the resume is owed."""

    interrupt_id: str
    run_id: str
    responder: str
    # As the close stored it (a quorum's names who decided it).
    answer: Answer
    at: float
    # The closed row, its run and the paused turn, so the resume needs no second read.
    closed: Question = field(repr=False, compare=False)
    run: RunRecord | None = field(repr=False, compare=False)
    turn: TurnToResume | None = field(default=None, repr=False, compare=False)


RedeemOutcome = Redeemed | Refusal


@dataclass(frozen=True, slots=True)
class Responder:
    """The person acting, as the surface identified them (e.g. ``slack:T1:U1``)."""

    id: str
    name: str = ""
    is_admin: bool = False

    @property
    def display(self) -> str:
        return self.name or self.id
