"""The rows the stores keep, defined with the lifecycle that writes them (``bot.questions``)."""

from bot.questions.records import *  # noqa: F403 - a stable import path for the row types
from bot.questions.records import MAX_CROSS_SCOPE_KEPT, answer_bucket, nearest_rank

__all__ = [  # noqa: F405 - the names come from bot.questions.records
    "MAX_CROSS_SCOPE_KEPT",
    "ApiKey",
    "ApiRequest",
    "ApiView",
    "AuditEvent",
    "Closing",
    "ConversationSummary",
    "Delivery",
    "DeliveryKind",
    "DeliveryState",
    "PendingFilter",
    "Question",
    "QuestionStats",
    "QuestionStatus",
    "RunRecord",
    "RunStatus",
    "answer_bucket",
    "nearest_rank",
]
