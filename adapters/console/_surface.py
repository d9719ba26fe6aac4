"""The console as a Surface: it posts nothing, it tells open pages to re-read.

The page draws every conversation from ``RunService.history``, so publishing
a question, closing one or finishing a run is only a "changed" notice.
"""

from __future__ import annotations

from typing import Any

from adapters.console._hub import EventHub, Subscription
from bot.questions.quorum import MayAnswer
from bot.questions.records import Question, RunRecord

SURFACE = "console"
HEARTBEAT_SECONDS = 15.0


class ConsoleSurface:
    """The embedded surface; owns the hub the event streams read from."""

    name = SURFACE

    def __init__(
        self, *, hub: EventHub | None = None, heartbeat_seconds: float = HEARTBEAT_SECONDS
    ) -> None:
        self.hub = hub or EventHub()
        # How often an idle event stream writes a comment, so proxies keep it
        # open and a vanished page is noticed.
        self.heartbeat_seconds = heartbeat_seconds

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        key = conversation_key(run)
        self.notify(key)
        return {"conversation": key}

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        self.notify(conversation_key(run))

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        self.notify(conversation_key(run))

    # Admin redraws (bot.service.delivering.surfaces.RedrawsQuestions): the page re-reads the
    # question, with its new expiry and re-derived token, from the store.
    async def refresh_question(
        self,
        run: RunRecord,
        question: Question,
        ref: dict[str, Any],
        *,
        token: str,
        may: MayAnswer,
    ) -> None:
        self.notify(conversation_key(run))

    async def show_moved(
        self, run: RunRecord, record: Question, previous_ref: dict[str, Any]
    ) -> None:
        self.notify(conversation_key(run))

    def notify(self, key: str) -> None:
        """Tell every open page that this conversation changed."""
        self.hub.publish(key)

    def subscribe(self) -> Subscription:
        return self.hub.subscribe()

    def unsubscribe(self, subscription: Subscription) -> None:
        self.hub.unsubscribe(subscription)

    async def close(self) -> None:
        """End every open stream, so shutdown does not wait on them."""
        await self.hub.close()


def conversation_key(run: RunRecord) -> str:
    return str(run.conversation.get("key", ""))
