"""Slack Web API failures as ``DeliveryError``: retry later, or say what to fix.

Rate limits and Slack's own outages are retried (no sooner than
Retry-After); every other ``ok: false`` is permanent, because sending the
same call again gets the same answer. Each permanent error is logged once
per workspace and error with the fix, not once per message.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.service.delivering.surfaces import DeliveryError

log = logging.getLogger(__name__)

TRANSIENT = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
DEFAULT_RETRY_SECONDS = 1.0
REINSTALL = "reinstall the app to the workspace (docs/slack.md) and update SLACK_BOT_TOKEN"
FIXES = {
    "invalid_auth": f"the bot token is not valid: {REINSTALL}",
    "not_authed": "no bot token was sent: set SLACK_BOT_TOKEN, or install the app through OAuth",
    "token_revoked": f"the bot token was revoked: {REINSTALL}",
    "token_expired": f"the bot token expired: {REINSTALL}",
    "account_inactive": f"the bot's account was deactivated: {REINSTALL}",
    "missing_scope": "the app lacks a scope it needs: update it from manifest.yml and reinstall",
    "channel_not_found": (
        "the channel does not exist or the bot cannot see it: invite the bot to it"
    ),
    "not_in_channel": "the bot is not in the channel: invite it with /invite @ the bot's name",
    "is_archived": "the channel is archived: unarchive it, or start the run in another channel",
    "msg_too_long": "Slack refused the message as too long: report this bug with the run id",
    "invalid_blocks": "Slack refused the message's blocks: report this bug with the run id",
    "msg_blocks_too_long": "Slack refused the blocks as too long: report this bug with the run id",
    "message_not_found": "the question's message was deleted, so it cannot be edited",
    "cant_update_message": "the bot may only edit its own messages: the reference is wrong",
    "team_access_not_granted": "the app is not installed in this workspace: install it there",
    "restricted_action": "a workspace admin restricts posting in this channel: ask them",
}


class ErrorLog:
    """Logs each (workspace, error) once at ERROR with its fix, after that at DEBUG."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()

    def permanent(self, team: str, method: str, error: str, reason: str) -> None:
        key = (team, error)
        level = logging.DEBUG if key in self._seen else logging.ERROR
        self._seen.add(key)
        log.log(level, "slack %s failed: %s", method, reason, extra={"team": team, "error": error})


def delivery_error(error: Exception, *, method: str) -> DeliveryError:
    """The DeliveryError a failed Web API call (or connection) amounts to."""
    if isinstance(error, SlackApiError):
        response: Any = error.response
        code = str(response.get("error", "unknown_error"))
        status = int(getattr(response, "status_code", 200) or 200)
        if status == 429 or code in TRANSIENT or status >= 500:
            # The outbox says when it retries; the reason says only what failed.
            return DeliveryError(f"{method}: {code}", retry_after=_retry_after(response.headers))
        fix = FIXES.get(code, f"see the errors listed for {method} in Slack's API reference")
        return DeliveryError(f"{method}: {code}; {fix}.", permanent=True)
    # A connection problem (reset, timeout, DNS): the same call may well succeed later.
    return DeliveryError(f"{method}: could not reach Slack ({type(error).__name__})")


def error_code(reason: str) -> str:
    """The Slack error code at the start of a DeliveryError's reason."""
    return reason.split(": ", 1)[-1].split(";", 1)[0]


def _retry_after(headers: Any) -> float:
    raw = None
    if headers:
        for key, value in dict(headers).items():
            if str(key).lower() == "retry-after":
                raw = value[0] if isinstance(value, list) else value
    try:
        return max(0.0, float(raw)) if raw is not None else DEFAULT_RETRY_SECONDS
    except (TypeError, ValueError):
        return DEFAULT_RETRY_SECONDS
