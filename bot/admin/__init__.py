"""Admin commands, platform-neutral: parse, authorize, execute, audit.

A surface builds the ``Responder`` from its platform's authentication,
hands the typed text to ``AdminService.handle`` and renders the result
its own way (``text_of`` and ``json_of`` here for the shell and the
console; Block Kit and Adaptive Cards in their adapters). A result is one
of the closed union in ``results``, imported as a module so a renderer's
cases read ``results.HelpShown()``. Store reads and writes go through the
``AdminStore`` port.
"""

from bot.admin import results
from bot.admin._commands import (
    USAGES,
    Command,
    History,
    Usage,
    UsageError,
    parse,
    parse_duration,
)
from bot.admin._render import (
    duration,
    event_line,
    history_lines,
    json_of,
    json_text,
    link_of,
    ok,
    policy_lines,
    stats_facts,
    summary_of,
    text_of,
    title_of,
)
from bot.admin._service import ADMIN_SERVICE, AdminService, history_filter
from bot.admin._settings import AdminSettings

__all__ = [
    "ADMIN_SERVICE",
    "USAGES",
    "AdminService",
    "AdminSettings",
    "Command",
    "History",
    "Usage",
    "UsageError",
    "duration",
    "event_line",
    "history_filter",
    "history_lines",
    "json_of",
    "json_text",
    "link_of",
    "ok",
    "parse",
    "parse_duration",
    "policy_lines",
    "results",
    "stats_facts",
    "summary_of",
    "text_of",
    "title_of",
]
