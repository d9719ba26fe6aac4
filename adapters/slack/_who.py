"""Who and where a signed Slack payload names, and the idempotency keys of commands and clicks.

Identity comes from the signed payload only: the team, the channel and the
user are read where Slack puts them, never from a field the person typed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from slack_bolt.request.async_request import AsyncBoltRequest

from bot.contract.identity import slack_id
from bot.service.answering.outcomes import Responder

USER_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
CHANNEL_MENTION = re.compile(r"<#([A-Z0-9]+)(?:\|[^>]*)?>")


def ids_in(team: str, text: str) -> str:
    """Slack's escaped mentions as the ids admin filters use.

    With ``should_escape: false`` Slack sends ``@alice`` as ``<@U1|alice>``
    and ``#ops`` as ``<#C1|ops>``; ``pending user=@alice channel=#ops``
    then means ``user=slack:T:U1 channel=T:C1``.
    """
    text = USER_MENTION.sub(lambda m: slack_id(team, m.group(1)), text)
    return CHANNEL_MENTION.sub(lambda m: f"{team}:{m.group(1)}", text)


def responder(team: str, user: str, *, name: str = "") -> Responder:
    """The person as Slack signed them; ``name`` is what an answer records (the API shows it)."""
    return Responder(id=slack_id(team, user), name=name or f"<@{user}>")


def display_name(body: Mapping[str, Any]) -> str:
    """The name Slack sends with an interaction (``user.name``), or '' if none."""
    user = body.get("user")
    name = user.get("name") if isinstance(user, dict) else None
    return name if isinstance(name, str) else ""


def who_where(body: Mapping[str, Any]) -> tuple[str, str, str]:
    """(team, channel, user) of an interaction, from the signed payload."""
    user = body.get("user") or {}
    team = (body.get("team") or {}).get("id") or user.get("team_id") or ""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
        "channel_id", ""
    )
    return str(team), str(channel), str(user.get("id", ""))


def command_key(command: Mapping[str, Any], request: AsyncBoltRequest | None) -> str:
    """A slash command's idempotency key, derived from the signed request.

    Over HTTP, from its signature, which covers the timestamp and the whole
    body: the same request sent again is one key, a command Slack signs anew
    (a new invocation) another. Over Socket Mode, from the body, which
    carries the invocation's own ``trigger_id``.
    """
    text = _signature(request) or json.dumps(
        command, sort_keys=True, separators=(",", ":"), default=str
    )
    return "slack-command:" + hashlib.sha256(text.encode()).hexdigest()


def click_key(request: AsyncBoltRequest | None) -> str:
    """An answer click's idempotency key, from the signature of its HTTP request; none over
    Socket Mode (the bridge keeps no record of those)."""
    signature = _signature(request)
    return "slack-click:" + hashlib.sha256(signature.encode()).hexdigest() if signature else ""


def _signature(request: AsyncBoltRequest | None) -> str:
    return str((request.headers.get("x-slack-signature") or [""])[0]) if request else ""
