"""A Teams turn as RunService calls: messages start runs, card submits redeem answers.

The invoke is answered as soon as ``RunService.redeem`` returns, that is
after the checks and the spend; the resume runs in the background.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adapters.teams._activity import (
    INVOKE_ACTION,
    SURFACE,
    responder_of,
    scope_of,
    started,
    submitted,
)
from adapters.teams._admin import admin_card, admin_words
from adapters.teams._answers import answer_from, decision_answer, errors_for, values_from
from adapters.teams._card_kit import CARD_CONTENT_TYPE, Json, attachment
from adapters.teams._cards import question_card
from adapters.teams._closed import closed_card, refusal_card
from adapters.teams._surface import TeamsSurface
from bot.admin import AdminService
from bot.questions.records import Question, RunRecord
from bot.service.answering import outcomes
from bot.service.answering.outcomes import ChatsOff, NotStarted
from bot.service.delivering.messages import AGENTS_ONLY, NOT_STARTED, refusal_text
from bot.service.delivering.surfaces import DeliveryError
from bot.service.running.runs import RunService

log = logging.getLogger(__name__)

NOT_OUR_INVOKE = "This bot takes only its own cards' Action.Execute invokes."


@dataclass(frozen=True, slots=True)
class Reply:
    """The HTTP answer to an invoke activity."""

    status: int
    body: Json | None = None


def card_reply(content: Json) -> Reply:
    return Reply(200, {"statusCode": 200, "type": CARD_CONTENT_TYPE, "value": content})


class SeenActivities:
    """Admin command activity ids seen lately (bounded, expiring): a replay applies once.

    An activity's bearer token stays valid for a while, so the same signed
    activity can be sent again; the channel gives each message its own id.
    The first check only, in this process: the same key goes with the command
    into the store (``AdminService``'s ``key``), which holds across replicas.
    """

    def __init__(self, *, capacity: int = 10_000, keep_seconds: float = 3_600.0) -> None:
        self.capacity = capacity
        self.keep_seconds = keep_seconds
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first(self, key: str) -> bool:
        """True the first time ``key`` is seen inside the window; False for a replay."""
        now = time.monotonic()
        while self._seen and next(iter(self._seen.values())) <= now:
            self._seen.popitem(last=False)
        if key in self._seen:
            return False
        while len(self._seen) >= self.capacity:
            self._seen.popitem(last=False)
        self._seen[key] = now + self.keep_seconds
        return True


class TeamsBot:
    """Translates one activity into at most one RunService call."""

    def __init__(
        self,
        surface: TeamsSurface,
        service: Callable[[], RunService],
        admin: Callable[[], AdminService | None] = lambda: None,
    ) -> None:
        self.surface = surface
        self.service = service
        self.admin = admin
        self.seen_commands = SeenActivities()

    async def on_turn(self, activity: Json, reference: Json) -> Reply | None:
        words = admin_words(activity)
        admin = self.admin() if words is not None else None
        if words is not None and admin is not None:
            key = f"{activity.get('conversation', {}).get('id')}:{activity.get('id')}"
            if activity.get("id") and not self.seen_commands.first(key):
                log.info("a Teams admin command sent again was not applied twice")
                return None
            await self._admin(
                activity, admin, words, key=f"teams:{key}" if activity.get("id") else ""
            )
            return None
        start = started(activity, reference)
        if start is not None:
            try:
                run = await self.service().start(
                    start.where, start.who, start.text, key=start.key or None
                )
            except ChatsOff:
                await self._say(activity, AGENTS_ONLY)
                return None
            except NotStarted:
                await self._say(activity, NOT_STARTED)
                return None
            if run is None:
                log.info("duplicate Teams delivery ignored", extra={"activity": start.key})
            return None
        data = submitted(activity)
        if activity.get("type") == "invoke":
            if activity.get("name") != INVOKE_ACTION:
                # Only our cards' Action.Execute is an invoke we are sent.
                return Reply(400, {"error": NOT_OUR_INVOKE})
            if data is None:
                return card_reply(refusal_card(refusal_text(outcomes.TokenInvalid())))
            return await self._answer_invoke(activity, data)
        if data is not None:
            await self._answer_submit(activity, data)
        return None

    async def _say(self, activity: Json, text: str) -> None:
        message = {"type": "message", "text": text, "textFormat": "plain"}
        await self._reply(activity, message, doing="tell a Teams user why")

    async def _reply(self, activity: Json, message: Json, *, doing: str) -> None:
        """Send ``message`` into the activity's conversation. A failure is only logged
        ("could not <doing>"): the person's own activity has been handled either way."""
        conversation = str((activity.get("conversation") or {}).get("id", ""))
        try:
            await self.surface.connector.send(
                str(activity.get("serviceUrl", "")), conversation, message
            )
        except DeliveryError as error:
            log.warning("could not %s: %s", doing, error.reason)

    async def _admin(
        self, activity: Json, admin: AdminService, words: list[str], *, key: str
    ) -> None:
        """Run the command as the person the channel authenticated; reply in the same chat."""
        result = await admin.handle(words, who=responder_of(activity), key=key)
        reply = {"type": "message", "attachments": [attachment(admin_card(result))]}
        await self._reply(activity, reply, doing="reply to a Teams admin command")

    async def _answer_invoke(self, activity: Json, data: Mapping[str, Any]) -> Reply:
        outcome, found = await self._redeem(activity, data)
        if isinstance(outcome, outcomes.Redeemed):
            return card_reply(closed_card(outcome.closed))
        if isinstance(outcome, outcomes.Counted):
            # Counted toward a quorum: the voter sees the card again, with the tally.
            service = self.service()
            counted = await self._question(service, activity, data)
            if counted is not None:
                run, record = counted
                context = self.surface.card_context(
                    run,
                    record,
                    token=str(data.get("token", "")),
                    may=service.policy.who_may_answer(record, run.requester),
                )
                return card_reply(question_card(context))
        if isinstance(outcome, outcomes.AnswerInvalid) and found is None:
            found = await self._question(self.service(), activity, data)
        if isinstance(outcome, outcomes.AnswerInvalid) and found is not None:
            run, record = found
            errors = errors_for(record.payload, outcome.fields)
            context = self.surface.card_context(
                run,
                record,
                token=str(data.get("token", "")),
                may=self.service().policy.who_may_answer(record, run.requester),
                errors=errors or {"": refusal_text(outcome)},
                values=values_from(data),
            )
            return card_reply(question_card(context))
        return card_reply(refusal_card(refusal_text(outcome)))

    async def _answer_submit(self, activity: Json, data: Mapping[str, Any]) -> None:
        """Action.Submit, from clients without Universal Actions: no card to return."""
        outcome, _ = await self._redeem(activity, data)
        service_url = str(activity.get("serviceUrl", ""))
        conversation = str((activity.get("conversation") or {}).get("id", ""))
        try:
            if isinstance(outcome, outcomes.Redeemed):
                card_id = str(activity.get("replyToId") or "")
                if card_id:
                    update = {
                        "type": "message",
                        "attachments": [attachment(closed_card(outcome.closed))],
                    }
                    await self.surface.connector.update(service_url, conversation, card_id, update)
            else:
                message = {"type": "message", "text": refusal_text(outcome), "textFormat": "plain"}
                await self.surface.connector.send(service_url, conversation, message)
        except DeliveryError as error:
            log.warning("could not show the answer's outcome in Teams: %s", error.reason)

    async def _redeem(
        self, activity: Json, data: Mapping[str, Any]
    ) -> tuple[outcomes.RedeemOutcome, tuple[RunRecord, Question] | None]:
        service = self.service()
        found = None
        answer: Json = {}
        if data.get("kind") == "approval" and data.get("decision") != "edit":
            # An approval's answer needs nothing from the question: skip the read.
            # A forged kind only shapes the answer wrongly, which validation refuses.
            answer = decision_answer(data)
        else:
            found = await self._question(service, activity, data)
        if found is not None:
            _, record = found
            answer = answer_from(record.payload, data, schema=self.surface.schema_of(record.name))
        outcome = await service.redeem(
            str(data.get("token", "")),
            answer,
            responder=responder_of(activity),
            scope=scope_of(activity),
        )
        return outcome, found

    @staticmethod
    async def _question(
        service: RunService, activity: Json, data: Mapping[str, Any]
    ) -> tuple[RunRecord, Question] | None:
        """The open question the card's token answers, as the card's post shows it (its
        first route or a further one); the card's ``iid`` must name the same question.

        Only its shape is taken from here (to turn inputs into an answer);
        whether the token is good is still decided by ``redeem``.
        """
        found = await service.posted_question(
            str(data.get("token", "")),
            surface=SURFACE,
            scope=scope_of(activity),
            interrupt_id=str(data.get("iid", "")),
        )
        return (found.run, found.question) if found is not None else None
