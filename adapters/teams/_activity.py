"""Reading a Teams activity (as JSON): who, where, what was said, what was submitted.

Pure functions. Identity comes from the fields the channel fills in and
signs for (``from.aadObjectId``, the tenant), never from anything typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.contract.identity import teams_id
from bot.service.answering.outcomes import Responder
from bot.service.delivering.surfaces import Conversation

SURFACE = "teams"
INVOKE_ACTION = "adaptiveCard/action"
# The verb our cards put on every Action.Execute.
ANSWER_VERB = "answer"
# Marks data our cards submit, so a message with some other card's data is ignored.
MARKER = "hitl"
_AT_TAG = re.compile(r"<at[^>]*>.*?</at>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Started:
    """A message that should start a run."""

    where: Conversation
    who: Responder
    text: str
    key: str


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def tenant_of(activity: dict[str, Any]) -> str:
    conversation = _dict(activity.get("conversation"))
    tenant = conversation.get("tenantId") or _dict(_dict(activity.get("channelData")).get("tenant"))
    if isinstance(tenant, dict):
        tenant = tenant.get("id")
    return str(tenant or "local")


def base_conversation(conversation_id: str) -> str:
    """A channel thread's id without its ``;messageid=``: the channel itself."""
    return conversation_id.split(";", 1)[0]


def scope_of(activity: dict[str, Any]) -> str:
    """The tenant and the conversation (for a channel, the channel, not the thread)."""
    conversation_id = str(_dict(activity.get("conversation")).get("id", ""))
    return f"{tenant_of(activity)}/{base_conversation(conversation_id)}"


def responder_of(activity: dict[str, Any]) -> Responder:
    """The person as the channel authenticated them: tenant and AAD object id."""
    sender = _dict(activity.get("from"))
    person = sender.get("aadObjectId") or f"id:{sender.get('id', '')}"
    name = str(sender.get("name") or "")
    return Responder(id=teams_id(tenant_of(activity), str(person)), name=name)


def is_personal(activity: dict[str, Any]) -> bool:
    kind = _dict(activity.get("conversation")).get("conversationType")
    return kind in (None, "personal")


def mentions_bot(activity: dict[str, Any]) -> bool:
    bot_id = _dict(activity.get("recipient")).get("id")
    for entity in activity.get("entities") or []:
        entity = _dict(entity)
        if entity.get("type") == "mention" and _dict(entity.get("mentioned")).get("id") == bot_id:
            return True
    return False


def strip_mentions(text: str) -> str:
    """The message without ``<at>Bot</at>`` tags, whitespace collapsed."""
    return " ".join(_AT_TAG.sub(" ", text).split())


# Teams' ids are a few hundred characters; one far longer could never be answered
# in (the connector's URL would exceed what its server reads), so no run starts there.
MAX_CONVERSATION_ID = 1_000


def started(activity: dict[str, Any], reference: dict[str, Any]) -> Started | None:
    """A run to start: a personal message, or a group/channel message that @mentions the bot."""
    if activity.get("type") != "message" or activity.get("value") is not None:
        return None
    if not is_personal(activity) and not mentions_bot(activity):
        return None
    text = strip_mentions(str(activity.get("text") or ""))
    if not text:
        return None
    conversation_id = str(_dict(activity.get("conversation")).get("id", ""))
    if len(conversation_id) > MAX_CONVERSATION_ID:
        return None
    where = Conversation(
        surface=SURFACE,
        scope=scope_of(activity),
        key=conversation_id,
        thread=conversation_id if conversation_id != base_conversation(conversation_id) else "",
        reference=reference,
    )
    return Started(where, responder_of(activity), text, str(activity.get("id") or ""))


def submitted(activity: dict[str, Any]) -> dict[str, Any] | None:
    """The data one of our cards submitted: Action.Execute invoke or Action.Submit message."""
    if activity.get("type") == "invoke" and activity.get("name") == INVOKE_ACTION:
        action = _dict(_dict(activity.get("value")).get("action"))
        if action.get("verb") != ANSWER_VERB:
            return None
        data = _dict(action.get("data"))
    elif activity.get("type") == "message":
        data = _dict(activity.get("value"))
    else:
        return None
    return data if data.get(MARKER) else None
