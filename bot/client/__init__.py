"""The agents API client: ask a person through the bridge from any agent or script.

The boundary: this package imports nothing of the server, only itself and the
contract it shares with the server (``bot.contract``: the wire models, form
checks, identities, decisions and edits), and depends only on aiohttp and
pydantic, so an agent can install and import it alone. It re-exports the
contract's names its users import (here, and from ``bot.client.models``,
``bot.client.form_schema`` and its other submodules of old); no server module
imports it.
"""

from bot.client._approval import require_approval
from bot.client._bridge import (
    Bridge,
    QuestionsLike,
    RouteLike,
    RoutesLike,
    questions_of,
    route_of,
)
from bot.client._forms import form_schema_of
from bot.client._question import Question, outcome_error, transient
from bot.client._sync import SyncBridge, SyncQuestion
from bot.client.errors import (
    ApiError,
    BridgeError,
    Cancelled,
    Conflict,
    Expired,
    Forbidden,
    FormAnswerError,
    FormSchemaError,
    InvalidRequest,
    InvalidWebhook,
    NotFound,
    Outcome,
    PayloadTooLarge,
    RateLimited,
    Rejected,
    TransportError,
    Unauthorized,
    UnexpectedStatus,
    Unprocessable,
    WaitTimeout,
)
from bot.client.webhooks import verify_webhook
from bot.contract.answers import (
    Answer,
    ApprovalDecision,
    AskUserAnswers,
    CancelReason,
    FormValues,
    OtherAnswer,
)
from bot.contract.asking import AskOptions
from bot.contract.form_schema import check_form_answer, check_form_schema
from bot.contract.models import (
    AnsweredBy,
    ApprovalAnswer,
    ApprovalPayload,
    AskUserAnswer,
    AskUserItem,
    AskUserOption,
    AskUserPayload,
    Delivery,
    FormPayload,
    Policy,
    QuestionObject,
    QuestionPage,
    Route,
    WebhookEvent,
)

__all__ = [
    "Answer",
    "AnsweredBy",
    "ApiError",
    "ApprovalAnswer",
    "ApprovalDecision",
    "ApprovalPayload",
    "AskOptions",
    "AskUserAnswer",
    "AskUserAnswers",
    "AskUserItem",
    "AskUserOption",
    "AskUserPayload",
    "Bridge",
    "BridgeError",
    "CancelReason",
    "Cancelled",
    "Conflict",
    "Delivery",
    "Expired",
    "Forbidden",
    "FormAnswerError",
    "FormPayload",
    "FormSchemaError",
    "FormValues",
    "InvalidRequest",
    "InvalidWebhook",
    "NotFound",
    "OtherAnswer",
    "Outcome",
    "PayloadTooLarge",
    "Policy",
    "Question",
    "QuestionObject",
    "QuestionPage",
    "QuestionsLike",
    "RateLimited",
    "Rejected",
    "Route",
    "RouteLike",
    "RoutesLike",
    "SyncBridge",
    "SyncQuestion",
    "TransportError",
    "Unauthorized",
    "UnexpectedStatus",
    "Unprocessable",
    "WaitTimeout",
    "WebhookEvent",
    "check_form_answer",
    "check_form_schema",
    "form_schema_of",
    "outcome_error",
    "questions_of",
    "require_approval",
    "route_of",
    "transient",
    "verify_webhook",
]
