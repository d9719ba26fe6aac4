"""The Slack door: the signature, then the body as the typed payload Slack sends.

Pure functions, no I/O. ``verify`` proves a request came from Slack
without trusting any header's shape (a timestamp that is not an integer,
a signature that is not ASCII hex: each is simply not signed, a 401).
``parse`` then reads the proven body into strict pydantic models of the
payloads Slack documents (Events API callbacks, interactivity payloads,
slash commands): a wrong type is refused, not coerced, so a listener only
ever sees the fields it reads in the types it reads them as.

A signature covers the timestamp and the whole body, so a second request
with one already seen is the same request sent again (a replay, or a
proxy's retry): it is answered as the first was and changes nothing.
Slack's own retries are signed afresh (new timestamp) and are deduplicated
further in, by event id.

``SeenSignatures`` is the port for the signatures seen inside the timestamp
window, and how each was answered; ``InProcessSignatures`` keeps the record
in this process, bounded and expiring: the first check, which also makes
a replay arriving while the first is in flight wait for its answer. The
record every replica shares is the store's (``bot.stores.ports.Replays``),
consulted next by the bridge; an admin command's effect is further keyed
(``AdminService``'s ``key``), so even a replay that finds no answer, because
the first request's process died, applies nothing twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bot.errors import BotError
from bot.serving import JsonRejected, loads_limited
from bot.stores.ports import StoredResponse

TIMESTAMP_WINDOW_SECONDS = 300
"""Slack's own advice: refuse a request whose timestamp is more than five minutes off."""

MAX_DEPTH = 16
"""Slack's payloads nest about eight deep (a view's state values, a message's blocks)."""

_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def verify(secret: bytes, body: bytes, headers: Mapping[str, str], *, now: float) -> str | None:
    """The request's signature if it is Slack's for ``body`` and current, else None."""
    if not may_be_signed(headers, now=now):
        return None
    timestamp = headers["X-Slack-Request-Timestamp"]
    signature = headers["X-Slack-Signature"]
    base = b"v0:" + timestamp.encode("ascii") + b":" + body
    expected = "v0=" + hmac.new(secret, base, hashlib.sha256).hexdigest()
    return signature if hmac.compare_digest(expected, signature) else None


def may_be_signed(headers: Mapping[str, str], *, now: float) -> bool:
    """Whether a request's headers are shaped as Slack signs them, with a current timestamp:
    all that can be known of it before its body is read (the signature covers the body)."""
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not _TIMESTAMP.fullmatch(timestamp) or not _SIGNATURE.fullmatch(signature):
        return False
    return abs(now - int(timestamp)) <= TIMESTAMP_WINDOW_SECONDS


# -- replays ----------------------------------------------------------------------

# A signature is good for the timestamp window either way of its timestamp.
KEEP_SECONDS = 2 * TIMESTAMP_WINDOW_SECONDS


class SeenSignatures(Protocol):
    def claim(self, signature: str) -> asyncio.Future[StoredResponse] | None:
        """None for a signature not seen before (now recorded; call ``settle``);
        else the future of the first request's answer."""

    def settle(self, signature: str, answered: StoredResponse | None) -> None:
        """The first request's answer; None if it failed and a resend may try again."""


class InProcessSignatures:
    """At most ``capacity`` signatures, each kept for the timestamp window (both ways)."""

    def __init__(
        self,
        *,
        capacity: int = 50_000,
        keep_seconds: float = KEEP_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.keep_seconds = keep_seconds
        self._clock = clock
        self._seen: OrderedDict[str, tuple[float, asyncio.Future[StoredResponse]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def claim(self, signature: str) -> asyncio.Future[StoredResponse] | None:
        now = self._clock()
        self._expire(now)
        found = self._seen.get(signature)
        if found is not None:
            return found[1]
        while len(self._seen) >= self.capacity:
            self._seen.popitem(last=False)
        future: asyncio.Future[StoredResponse] = asyncio.get_running_loop().create_future()
        self._seen[signature] = (now + self.keep_seconds, future)
        return None

    def settle(self, signature: str, answered: StoredResponse | None) -> None:
        found = self._seen.get(signature)
        if found is None:
            return
        _, future = found
        if answered is None:
            del self._seen[signature]
            if not future.done():
                future.cancel()
            return
        if not future.done():
            future.set_result(answered)

    def _expire(self, now: float) -> None:
        # Entries are in insertion order, which is expiry order.
        while self._seen:
            signature, (expires, _) = next(iter(self._seen.items()))
            if expires > now:
                return
            del self._seen[signature]


# -- the payloads ------------------------------------------------------------------


class _Model(BaseModel):
    # Slack adds fields over time: unknown ones pass; known ones must have their type.
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class Id(_Model):
    id: str


class User(_Model):
    id: str
    team_id: str | None = None


class _ChatEvent(_Model):
    """What ``message`` and ``app_mention`` share: the two events that start or continue runs."""

    ts: str
    channel: str
    user: str | None = None
    text: str | None = None
    thread_ts: str | None = None
    channel_type: str | None = None
    subtype: str | None = None
    bot_id: str | None = None
    team: str | None = None
    # An edit or a deletion carries the message itself; bolt reads its subtype.
    message: dict[str, Any] | None = None
    previous_message: dict[str, Any] | None = None


class MessageEvent(_ChatEvent):
    type: Literal["message"]


class AppMention(_ChatEvent):
    """An @mention always has its author and its text."""

    type: Literal["app_mention"]
    user: str
    text: str


class OtherEvent(_Model):
    """Any other event (token revocations, uninstalls): bolt's own listeners read it."""

    type: str


class EventCallback(_Model):
    type: Literal["event_callback"]
    team_id: str
    event_id: str
    api_app_id: str | None = None
    enterprise_id: str | None = None
    is_enterprise_install: bool | None = None
    authorizations: list[dict[str, Any]] | None = None
    is_ext_shared_channel: bool | None = None
    event: dict[str, Any]


class UrlVerification(_Model):
    type: Literal["url_verification"]
    challenge: str


class AppRateLimited(_Model):
    """Slack's notice that it is holding back the app's events for a while."""

    type: Literal["app_rate_limited"]


class Action(_Model):
    action_id: str
    block_id: str | None = None
    type: str | None = None
    value: str | None = Field(default=None, max_length=2_000)  # Block Kit's limit


class Block(_Model):
    type: str | None = None
    elements: list[dict[str, Any]] | None = None


class ActionMessage(_Model):
    """The message whose button was clicked, as a block action carries it."""

    ts: str | None = None
    user: str | None = None
    thread_ts: str | None = None
    blocks: list[Block] | None = None


class Container(_Model):
    channel_id: str | None = None
    message_ts: str | None = None


class _Acted(_Model):
    """Who acted, and in which workspace or Enterprise Grid org: what a click and a modal's
    submission both say, and what finds the installation that answers them."""

    user: User
    team: Id | None = None
    enterprise: Id | None = None
    is_enterprise_install: bool | None = None


class BlockActions(_Acted):
    type: Literal["block_actions"]
    channel: Id | None = None
    container: Container | None = None
    message: ActionMessage | None = None
    trigger_id: str | None = None
    actions: list[Action] = Field(min_length=1)


class ViewState(_Model):
    values: dict[str, dict[str, dict[str, Any]]]


class View(_Model):
    type: str
    callback_id: str
    team_id: str | None = None
    app_installed_team_id: str | None = None
    private_metadata: str = Field(default="", max_length=3_000)
    state: ViewState | None = None


class ViewSubmission(_Acted):
    type: Literal["view_submission"]
    view: View
    response_urls: list[dict[str, Any]] = Field(default_factory=list)


class ViewClosed(_Model):
    type: Literal["view_closed"]
    user: User
    view: View


class SslCheck(_Model):
    """Slack's check of a slash command URL's certificate: answered 200 by bolt."""

    ssl_check: Literal["1"]
    token: str | None = None


class SlashCommand(_Model):
    command: str
    text: str = ""
    team_id: str
    user_id: str
    channel_id: str
    enterprise_id: str | None = None
    response_url: str | None = None
    trigger_id: str | None = None


_JsonBody = TypeAdapter(
    Annotated[EventCallback | UrlVerification | AppRateLimited, Field(discriminator="type")]
)
_Interaction = TypeAdapter(
    Annotated[BlockActions | ViewSubmission | ViewClosed, Field(discriminator="type")]
)
_Event = TypeAdapter(Annotated[MessageEvent | AppMention, Field(discriminator="type")])
_OTHER_EVENT = TypeAdapter(OtherEvent)


class NotAPayload(BotError, ValueError):
    """The body, though signed, is not a payload Slack sends."""


def parse(body: bytes, content_type: str) -> dict[str, Any]:
    """A signed body as the dict bolt reads, once its typed payload has been checked;
    NotAPayload for anything Slack does not send."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise NotAPayload("not UTF-8") from None
    try:
        if content_type == JSON:
            loaded = loads_limited(text, max_depth=MAX_DEPTH)
            _event_callback(loaded)
            return dict(loaded)
        if content_type == FORM:
            fields = _form(text)
            if "payload" in fields:
                interaction = loads_limited(fields["payload"], max_depth=MAX_DEPTH)
                _Interaction.validate_python(interaction)
                return dict(interaction)
            if "ssl_check" in fields:
                SslCheck.model_validate(fields)
            else:
                SlashCommand.model_validate(fields)
            return dict(fields)
    except (JsonRejected, ValidationError) as error:
        raise NotAPayload(str(error)) from None
    raise NotAPayload(f"content type {content_type!r}")


def _event_callback(value: Any) -> BaseModel:
    payload = _JsonBody.validate_python(value)
    if isinstance(payload, EventCallback):
        kind = payload.event.get("type")
        if kind in ("message", "app_mention"):
            _Event.validate_python(payload.event)
        else:
            _OTHER_EVENT.validate_python(payload.event)
    return payload


def _form(text: str) -> dict[str, str]:
    """A form body's fields; a field sent twice is not something Slack does."""
    if text.startswith("payload=") and "&" not in text:
        # An interaction, the one field Slack sends then: unquoted without the
        # standard parser's loop over every escape (one per quote, colon, comma).
        payload = _unquote_plus(text[len("payload=") :])
        if payload is not None:
            return {"payload": payload}
    try:
        pairs = urllib.parse.parse_qsl(
            text, keep_blank_values=True, strict_parsing=bool(text), errors="strict"
        )
    except (ValueError, UnicodeDecodeError):
        raise NotAPayload("not a form") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise NotAPayload("a form field sent twice")
    return fields


def _unquote_plus(value: str) -> str | None:
    """``urllib.parse.unquote_plus(value, errors="strict")`` for the usual text, ASCII with
    no backslash: each ``%XX`` as the escape ``\\xXX``, decoded by the codec in C; None for
    any other text, or an escape the codec refuses, which the standard parser then reads."""
    if not value.isascii() or "\\" in value:
        return None
    escaped = value.replace("+", " ").replace("%", "\\x").encode("ascii")
    try:
        return escaped.decode("unicode_escape").encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return None
