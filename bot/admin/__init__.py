"""Admin commands, platform-neutral: parse, authorize, execute, audit.

A surface builds the ``Responder`` from its platform's authentication,
hands the typed text to ``AdminService.handle`` and renders the result
value its own way (``text_of`` and ``json_of`` here for the shell and the
console; Block Kit and Adaptive Cards in their adapters). Store reads and
writes go through the ``AdminStore`` port.
"""

from bot.admin._commands import USAGES, Command, Usage, UsageError, parse, parse_duration
from bot.admin._render import (
    duration,
    event_line,
    json_of,
    link_of,
    policy_lines,
    summary_of,
    text_of,
    title_of,
)
from bot.admin._results import (
    AdminRefusal,
    AdminResult,
    AdminsOnly,
    AlreadyDone,
    AuditShown,
    CancelDone,
    CommandInvalid,
    Extended,
    HelpShown,
    NotFound,
    NotOpen,
    PendingItem,
    PendingPage,
    RecordShown,
    Resent,
    StatsShown,
    TooLong,
)
from bot.admin._service import ADMIN_SERVICE, AdminService
from bot.admin._settings import AdminSettings

__all__ = [
    "ADMIN_SERVICE",
    "USAGES",
    "AdminRefusal",
    "AdminResult",
    "AdminService",
    "AdminSettings",
    "AdminsOnly",
    "AlreadyDone",
    "AuditShown",
    "CancelDone",
    "Command",
    "CommandInvalid",
    "Extended",
    "HelpShown",
    "NotFound",
    "NotOpen",
    "PendingItem",
    "PendingPage",
    "RecordShown",
    "Resent",
    "StatsShown",
    "TooLong",
    "Usage",
    "UsageError",
    "duration",
    "event_line",
    "json_of",
    "link_of",
    "parse",
    "parse_duration",
    "policy_lines",
    "summary_of",
    "text_of",
    "title_of",
]
