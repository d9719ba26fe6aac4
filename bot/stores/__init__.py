"""Store ports and their backends; ``open_stores`` picks one from a URL."""

from bot.stores.errors import StoreError
from bot.stores.memory import InMemoryConsumption, MemoryStores
from bot.stores.ports import Audit, Checkpoints, Consumption, Ledger, Runs, Stores
from bot.stores.records import (
    AuditEvent,
    Closing,
    ConversationSummary,
    PauseRecord,
    PauseStatus,
    RunRecord,
    RunStatus,
)
from bot.stores.sqlite import SqliteStores
from bot.stores.url import open_stores

__all__ = [
    "Audit",
    "AuditEvent",
    "Checkpoints",
    "Closing",
    "Consumption",
    "ConversationSummary",
    "InMemoryConsumption",
    "Ledger",
    "MemoryStores",
    "PauseRecord",
    "PauseStatus",
    "RunRecord",
    "RunStatus",
    "Runs",
    "SqliteStores",
    "StoreError",
    "Stores",
    "open_stores",
]
