"""Store ports and their backends; ``open_stores`` picks one from a URL."""

from bot.questions.records import (
    AuditEvent,
    Closing,
    ConversationSummary,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.stores.errors import StoreError
from bot.stores.ports import (
    Audit,
    AuditChain,
    Checkpoints,
    Closed,
    HistoryFilter,
    Ledger,
    Runs,
    Stores,
)
from bot.stores.sqlite import SqliteStores
from bot.stores.url import open_stores

__all__ = [
    "Audit",
    "AuditChain",
    "AuditEvent",
    "Checkpoints",
    "Closed",
    "Closing",
    "ConversationSummary",
    "HistoryFilter",
    "Ledger",
    "Question",
    "QuestionStatus",
    "RunRecord",
    "RunStatus",
    "Runs",
    "SqliteStores",
    "StoreError",
    "Stores",
    "open_stores",
]
