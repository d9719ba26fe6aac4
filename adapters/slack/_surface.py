"""Slack as a Surface: post a question, edit it once closed, reply in the thread.

Every Web API failure leaves here as ``DeliveryError`` (``_errors``) and the
outbox retries it, no sooner than Slack's Retry-After. ``retry_rate_limits=True``
retries a rate-limited call in place instead (bounded), for code that calls
the surface with no outbox behind it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._admin import message_link, moved_message
from adapters.slack._errors import ErrorLog, delivery_error, error_code
from adapters.slack._render import (
    SURFACE,
    closed_message,
    group_mention,
    is_slack,
    is_slack_person,
    mention,
    name_shown,
    named,
    person,
    question_message,
    reply_message,
)
from bot.display import display
from bot.questions.quorum import (
    MayAnswer,
    people_text,
    quorum_deciders,
    tally_line,
    voter_names,
)
from bot.questions.records import Question, RunRecord
from bot.service.answering.outcomes import Responder
from bot.service.delivering.messages import nudge_text, who_may_answer_text
from bot.service.delivering.surfaces import DeliveryError

log = logging.getLogger(__name__)

ClientFor = Callable[[str], Awaitable[AsyncWebClient]]
ATTEMPTS = 4
MAX_WAIT_SECONDS = 30.0
GROUP_CACHE_SECONDS = 300.0
JSON_METHODS = frozenset(
    {"chat.postMessage", "chat.update", "chat.postEphemeral", "views.open", "auth.test"}
)


class SlackSurface:
    """Posts through the Web API client of the run's workspace."""

    name = SURFACE

    def __init__(self, *, client_for: ClientFor, retry_rate_limits: bool = False) -> None:
        self._client_for = client_for
        self._retry = retry_rate_limits
        self._errors = ErrorLog()
        self._team = ""

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        team, channel, thread = where(run)
        message = open_message(run, question, token=token, may=may)
        if thread:
            message = {**message, "thread_ts": thread}
        # An agent's question (the agents API) may start a thread of its own.
        posted = await self.call(team, "chat.postMessage", channel=channel, **message)
        return {"team": team, "channel": channel, "ts": str(posted.get("ts", ""))}

    async def workspace(self) -> str:
        """The team id of the bot token, as ``auth.test`` says (cached once known)."""
        if not self._team:
            reply = await self.call("", "auth.test")
            self._team = str(reply.get("team_id") or "")
        return self._team

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        message = closed_message(record, requester=mention(run.requester), by=closed_by(record))
        await self._edit(record.message_ref or {}, message)

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
        """The question redrawn in place: its new expiry, and the token re-derived with it."""
        await self._edit(ref, open_message(run, question, token=token, may=may))

    async def show_moved(
        self, run: RunRecord, record: Question, previous_ref: dict[str, Any]
    ) -> None:
        """The earlier message, without its buttons, pointing to the question's new message."""
        await self._edit(previous_ref, moved_message(message_link(record.message_ref)))

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        team, channel, thread = where(run)
        # The run's final text is the model's: mrkdwn it writes shows, mentions and links not.
        shown = reply_message(display(text, markup="slack"))
        await self.call(team, "chat.postMessage", channel=channel, thread_ts=thread, **shown)

    async def post_nudge(self, run: RunRecord, record: Question, nudge: dict[str, Any]) -> None:
        """A reminder or an escalation ping, in the posted question's thread."""
        ref = record.message_ref or {}
        team, channel, thread = where(run)
        # Slack's own people (``slack:T:U`` or a bare ``U…``); another surface's are not.
        people = [person(p) for p in map(str, nudge.get("people", ())) if is_slack_person(p)]
        groups = [group_mention(str(g)) for g in nudge.get("groups", ())]
        text = nudge_text(nudge, people, groups)
        await self.call(
            str(ref.get("team") or team),
            "chat.postMessage",
            channel=str(ref.get("channel") or channel),
            thread_ts=thread or str(ref.get("ts") or "") or None,
            **reply_message(text),
        )

    async def post_ephemeral(self, team: str, channel: str, user: str, text: str) -> None:
        await self.call(team, "chat.postEphemeral", channel=channel, user=user, text=text)

    async def _edit(self, ref: dict[str, Any], message: dict[str, Any]) -> None:
        """Edit the message a stored reference names; one never posted is left alone."""
        if not ref.get("ts"):
            return  # never posted (delivery failed): nothing to edit
        await self.call(
            str(ref.get("team", "")), "chat.update", channel=ref["channel"], ts=ref["ts"], **message
        )

    async def call(self, team: str, method: str, **arguments: Any) -> dict[str, Any]:
        """One Web API call; DeliveryError when it cannot be delivered (after retries)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                client = await self._client_for(team)
                if method in JSON_METHODS:
                    response = await client.api_call(method, json=arguments)
                else:
                    # Read methods (usergroups.users.list) take form fields, not JSON.
                    response = await client.api_call(method, data=arguments)
                return dict(response.data) if isinstance(response.data, dict) else {}
            except (SlackApiError, aiohttp.ClientError, TimeoutError) as error:
                failure = delivery_error(error, method=method)
            if failure.permanent:
                self._errors.permanent(team, method, error_code(failure.reason), failure.reason)
                raise failure
            wait = failure.retry_after if failure.retry_after is not None else 0.5 * attempt
            if not self._retry or attempt >= ATTEMPTS or wait > MAX_WAIT_SECONDS:
                log.warning("slack %s gave up: %s", method, failure.reason, extra={"team": team})
                raise failure
            log.info("slack %s: %s; retry in %.1f s", method, failure.reason, wait)
            await asyncio.sleep(wait)


class SlackDirectory:
    """User group membership from ``usergroups.users.list``, cached per group."""

    def __init__(self, surface: SlackSurface, *, ttl: float = GROUP_CACHE_SECONDS) -> None:
        self._surface = surface
        self._ttl = ttl
        self._cache: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}

    async def is_member(self, group: str, who: Responder) -> bool:
        parts = who.id.split(":")
        if len(parts) != 3 or parts[0] != SURFACE:
            return False
        _, team, user = parts
        return user in await self._members(team, group)

    async def _members(self, team: str, group: str) -> frozenset[str]:
        now = time.monotonic()
        cached = self._cache.get((team, group))
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        try:
            data = await self._surface.call(team, "usergroups.users.list", usergroup=group)
        except DeliveryError as error:
            # Fail closed: nobody is a member of a group we cannot read.
            log.warning("cannot read user group %s: %s", group, error.reason)
            return cached[1] if cached else frozenset()
        members = frozenset(str(user) for user in data.get("users") or [])
        self._cache[(team, group)] = (now, members)
        return members


def where(run: RunRecord) -> tuple[str, str, str]:
    """(team, channel, thread ts) of the run's conversation."""
    reference = run.conversation.get("reference") or {}
    return (
        str(reference.get("team", "")),
        str(reference.get("channel", "")),
        str(reference.get("thread_ts", "")),
    )


def open_message(
    run: RunRecord, question: Question, *, token: str, may: MayAnswer
) -> dict[str, Any]:
    """The open question's message: who asked, who may answer, and under a quorum the tally."""
    return question_message(
        question,
        token=token,
        requester=mention(run.requester),
        audience=audience(may, voter_names(question.tally)),
        # Each Slack voter as Slack renders the person, whatever name the answer recorded.
        tally=tally_line(question, named),
    )


def closed_by(record: Question) -> str:
    """Who closed ``record``, as mrkdwn: every approver (or rejecter) of a quorum's decision,
    else the one who closed it; a Slack person as Slack renders them, whatever name the
    answer recorded."""
    deciders = quorum_deciders(record.answer)
    if deciders:
        names = record.tally.names if record.tally is not None else {}
        return people_text([named(str(d), str(names.get(d, d))) for d in deciders])
    if is_slack(record.closed_by_id):
        return mention(record.closed_by_id)
    return name_shown(record.closed_by)


def audience(may: MayAnswer, seen: Mapping[str, str] | None = None) -> str:
    """Who may answer, as the question shows it (and a refused person is told): a Slack
    person or group as a mention, a person of another surface by the name ``seen`` gives
    them, else a short form of their id."""
    names = [person(who, seen) for who in may.persons()]
    return who_may_answer_text(may, names + [group_mention(g) for g in may.groups])
