"""The Teams door: a JSON body read into the strict shape of a Bot Framework activity.

Every activity the channel sends names where to reply (``serviceUrl``), the
conversation and the sender; one without them, or with a field we read in
the wrong type, is not from the channel and is refused (400) before it can
start a run. Unknown fields pass: the schema grows.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.errors import BotError
from bot.serving import JsonRejected, loads_limited

MAX_DEPTH = 32
"""An Adaptive Card's submitted data is flat; the deepest activity field nests a few levels."""


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class Account(_Model):
    id: str = Field(min_length=1)
    name: str | None = None
    aadObjectId: str | None = None


class ConversationAccount(_Model):
    """The conversation an activity comes from, by the Bot Framework schema's name for it."""

    id: str = Field(min_length=1)
    conversationType: str | None = None
    tenantId: str | None = None


class Activity(_Model):
    type: str = Field(min_length=1)
    serviceUrl: str = Field(pattern=r"^https?://[^\s/]+")
    conversation: ConversationAccount
    from_: Account = Field(alias="from")
    recipient: Account | None = None
    id: str | None = None
    name: str | None = None
    text: str | None = None
    replyToId: str | None = None
    channelId: str | None = None
    channelData: dict[str, Any] | None = None
    entities: list[dict[str, Any]] | None = None


class NotAnActivity(BotError, ValueError):
    """The body is not a Bot Framework activity."""


def parse(raw: bytes) -> dict[str, Any]:
    """The body as a dict, proven to have an activity's shape; NotAnActivity otherwise."""
    try:
        body = loads_limited(raw, max_depth=MAX_DEPTH)
        if not isinstance(body, dict):
            raise NotAnActivity("not an object")
        Activity.model_validate(body)
    except (JsonRejected, ValidationError) as error:
        raise NotAnActivity(str(error)) from None
    return body
