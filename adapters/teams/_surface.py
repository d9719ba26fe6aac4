"""Teams as a Surface: post questions as cards, edit them when closed, post outcomes.

Every post goes to the conversation reference stored with the run, so any
replica sharing the store can deliver (proactive messaging). The returned
message reference names the service URL, conversation and activity id, so
whoever closes the question can edit the card.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from adapters.teams._admin import message_link, moved_card
from adapters.teams._card_kit import Json, attachment
from adapters.teams._cards import CardContext, question_card
from adapters.teams._closed import closed_card
from adapters.teams._connector import Connector, with_retries
from bot.contract.identity import teams_id
from bot.questions.quorum import MayAnswer, tally_line, voter_names
from bot.questions.records import Question, RunRecord
from bot.service.delivering.messages import group_text, nudge_text, person_text, who_may_answer_text
from bot.service.delivering.surfaces import DeliveryError

log = logging.getLogger(__name__)

SURFACE = "teams"
# The outbox retries a 429 or 5xx (honouring Retry-After) without holding a
# delivery pass; a deployment may still ask for in-place attempts.
ATTEMPTS = 1
MAX_WAIT_SECONDS = 30.0
NO_REFERENCE = "The run has no Teams conversation reference; it cannot be posted to."

SchemaOf = Callable[[str], Json | None]


class TeamsSurface:
    """Posts and edits through the connector; decides nothing."""

    name = SURFACE

    def __init__(
        self,
        connector: Connector,
        *,
        schema_of: SchemaOf,
        attempts: int = ATTEMPTS,
    ) -> None:
        self.connector = connector
        self.schema_of = schema_of
        self.attempts = attempts

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        reference = _reference(run)
        content = question_card(self.card_context(run, question, token=token, may=may))
        activity = {"type": "message", "attachments": [attachment(content)]}
        conversation = reference["conversation"]["id"]
        activity_id = await self._deliver(
            lambda: self.connector.send(reference["serviceUrl"], conversation, activity)
        )
        return {
            "service_url": reference["serviceUrl"],
            "conversation_id": conversation,
            "activity_id": activity_id,
        }

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        await self._replace_card(record.message_ref or {}, closed_card(record))

    # Admin redraws (bot.service.delivering.surfaces.RedrawsQuestions).
    async def refresh_question(
        self,
        run: RunRecord,
        question: Question,
        ref: dict[str, Any],
        *,
        token: str,
        may: MayAnswer,
    ) -> None:
        """The card redrawn in place: the new expiry, and the token re-derived with it."""
        context = self.card_context(run, question, token=token, may=may)
        await self._replace_card(ref, question_card(context))

    async def show_moved(
        self, run: RunRecord, record: Question, previous_ref: dict[str, Any]
    ) -> None:
        """The old card, without its buttons, pointing to the question's new card."""
        await self._replace_card(previous_ref, moved_card(message_link(record.message_ref)))

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        reference = _reference(run)
        activity = {"type": "message", "text": text, "textFormat": "plain"}
        conversation = reference["conversation"]["id"]
        await self._deliver(
            lambda: self.connector.send(reference["serviceUrl"], conversation, activity)
        )

    async def post_nudge(self, run: RunRecord, record: Question, nudge: Json) -> None:
        """A reminder or an escalation ping, in reply to the posted card (in a channel, in
        its thread). Teams people whose name the bot has seen are mentioned (``<at>``, with
        the mention entity); the others are counted, never shown as raw ids. Other
        surfaces' people and Slack's user groups are not Teams', so not named here."""
        reference = _reference(run)
        mentions, unnamed = _mentions(reference, nudge.get("people", ()))
        text = nudge_text(nudge, [m["text"] for m in mentions], [], unnamed=unnamed)
        activity: Json = {"type": "message", "text": text}
        if mentions:
            activity["entities"] = mentions
        conversation = str(reference["conversation"]["id"])
        posted = str((record.message_ref or {}).get("activity_id") or "")
        if posted:
            activity["replyToId"] = posted
            channel = reference["conversation"].get("conversationType") == "channel"
            if channel and ";messageid=" not in conversation:
                conversation = f"{conversation};messageid={posted}"
        await self._deliver(
            lambda: self.connector.send(reference["serviceUrl"], conversation, activity)
        )

    def card_context(
        self,
        run: RunRecord,
        question: Question,
        *,
        token: str,
        may: MayAnswer,
        errors: dict[str, str] | None = None,
        values: dict[str, str] | None = None,
    ) -> CardContext:
        """What an open question's card shows besides the question: who asked, who may
        answer (``may``, each person by the name the bridge has seen them by, else a short
        form of their id), the tally, and what a redraw keeps."""
        requester = str(_reference(run).get("user", {}).get("name") or "")
        seen = {**voter_names(question.tally), **_reference_names(run)}
        names = [person_text(who, seen) for who in may.persons()]
        return CardContext(
            question=question,
            token=token,
            asked_for=requester,
            who_may_answer=who_may_answer_text(may, names + [group_text(g) for g in may.groups]),
            response_schema=self.schema_of(question.name),
            errors=errors or {},
            values=values or {},
            tally=tally_line(question),
        )

    async def _replace_card(self, ref: dict[str, Any], content: Json) -> None:
        """Edit the card a stored message reference names; one never posted is left alone."""
        if not ref.get("activity_id"):
            return  # never posted (delivery failed): nothing to edit
        activity = {"type": "message", "attachments": [attachment(content)]}
        await self._deliver(
            lambda: self.connector.update(
                ref["service_url"], ref["conversation_id"], ref["activity_id"], activity
            )
        )

    async def _deliver(self, work: Callable[[], Any]) -> Any:
        try:
            return await with_retries(work, attempts=self.attempts, max_wait=MAX_WAIT_SECONDS)
        except DeliveryError as error:
            level = logging.ERROR if error.permanent else logging.WARNING
            log.log(level, "Teams delivery failed: %s", error.reason)
            raise


def _reference(run: RunRecord) -> dict[str, Any]:
    reference = run.conversation.get("reference")
    if not isinstance(reference, dict) or not reference.get("serviceUrl"):
        raise DeliveryError(NO_REFERENCE, permanent=True)
    return reference


def _reference_names(run: RunRecord) -> dict[str, str]:
    """The person whose message the run's conversation reference came from, by their id: who
    started the run, or for an agent's question the last person the bot saw there."""
    user = _reference(run).get("user") or {}
    aad, name = str(user.get("aadObjectId") or ""), str(user.get("name") or "")
    tenant = run.scope.partition("/")[0]
    return {teams_id(tenant, aad): name} if aad and name and tenant else {}


def _mentions(reference: Json, people: Any) -> tuple[list[Json], int]:
    """Mention entities for the Teams people (``teams:<tenant>:<aadObjectId>``) whose name the
    conversation reference gave, and how many other Teams people could not be named."""
    user = reference.get("user") or {}
    names = {str(user.get("aadObjectId") or ""): (str(user.get("id") or ""), user.get("name"))}
    mentions: list[Json] = []
    unnamed = 0
    for person in people:
        surface, _, rest = str(person).partition(":")
        if surface != SURFACE:
            continue
        aad = rest.rsplit(":", 1)[-1]
        account, name = names.get(aad, ("", None))
        if not name:
            unnamed += 1
            continue
        tag = f"<at>{name}</at>"
        mentions.append(
            {"type": "mention", "text": tag, "mentioned": {"id": account or aad, "name": name}}
        )
    return mentions, unnamed
