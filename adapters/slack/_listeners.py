"""Bolt listeners: translate Slack events and interactions into RunService calls.

Who acts is always the user id of the signed payload, never text. A click
is checked and spent (``RunService.redeem``) before the ack, so a refusal
can still be shown in the modal; the resume runs after, in the background.
If the redeem ever takes longer than ``ACK_BUDGET_SECONDS`` the ack goes
first and the outcome is reported as an ephemeral message instead.

Bolt runs with ``process_before_response``: the ack is sent when a listener
returns (rather than bolt polling for it every 10 ms), so whatever a
listener owes after its ack (an ephemeral refusal, opening a modal) runs in
a task this class owns and ``close`` drains.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.slack._admin import admin_message
from adapters.slack._modals import (
    FormKind,
    Metadata,
    answer_from_state,
    answer_modal,
    edit_modal,
    errors_for,
    form_kind,
    reject_modal,
    respond_modal,
)
from adapters.slack._render import (
    APPROVE,
    CHOOSE,
    EDIT,
    OPEN_FORM,
    REJECT,
    RESPOND,
    SURFACE,
    name_shown,
    parse_value,
)
from adapters.slack._surface import SlackSurface, audience
from adapters.slack._who import (
    click_key,
    command_key,
    display_name,
    ids_in,
    responder,
    who_where,
)
from bot.admin import AdminService, results
from bot.contract.payloads import ApprovalPayload, OtherPayload, Payload
from bot.display import display
from bot.questions.records import Question
from bot.service.answering import outcomes
from bot.service.answering.outcomes import ChatsOff, NotStarted, Responder
from bot.service.answering.policy import Directory
from bot.service.delivering.messages import (
    ADMIN_COMMANDS_UNAVAILABLE,
    AGENTS_ONLY,
    LATE_ANSWER_RECORDED,
    NOT_STARTED,
    QUESTION_CLOSED,
    WORKING_ON_IT,
    refusal_text,
)
from bot.service.delivering.surfaces import Conversation, DeliveryError
from bot.service.running.runs import RunService

log = logging.getLogger(__name__)

ACK_BUDGET_SECONDS = 2.0
# The action ids of the buttons that answer a question (``Listeners.click``).
CLICK = re.compile(f"^({CHOOSE}|{APPROVE}):")


def is_click(interaction: Mapping[str, Any]) -> bool:
    """``interaction`` (the request's ``payload``) is an answer click: bolt matches an action
    by the first of its actions."""
    if interaction.get("type") != "block_actions":
        return False
    actions = interaction.get("actions") or [{}]
    return bool(CLICK.match(str(actions[0].get("action_id") or "")))


class Listeners:
    """Handlers registered on the bolt app; the service is bound once it starts."""

    def __init__(
        self,
        surface: SlackSurface,
        *,
        admin: Callable[[], AdminService | None] = lambda: None,
        admin_groups: Sequence[str] = (),
        directory: Directory | None = None,
    ) -> None:
        self.surface = surface
        # Bound when the bridge starts serving (``bind``): held here, not asked of the
        # bridge on each click, so the calls between the two files go one way.
        self._service: RunService | None = None
        self.admin = admin
        self.admin_groups = tuple(admin_groups)
        self.directory = directory
        self._tasks: set[asyncio.Task[None]] = set()

    def bind(self, service: RunService) -> None:
        """The run service every listener answers through, from the bridge's start."""
        self._service = service

    def service(self) -> RunService:
        if self._service is None:
            raise RuntimeError("slack event before the run service started")
        return self._service

    async def close(self, grace_seconds: float = 5.0) -> None:
        """Let after-ack work finish (briefly), then cancel what is left."""
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=grace_seconds)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def later(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("slack after-ack work failed", exc_info=task.exception())

    def register(self, app: AsyncApp) -> None:
        # Bolt tries each listener's matcher in turn: the answer clicks, the hot
        # path, are matched first (no two of these match the same request).
        app.action(CLICK)(self.click)
        app.event("app_mention")(self.mention)
        app.event("message")(self.message)
        app.action(re.compile(f"^{REJECT}:"))(self.reject)
        app.action(re.compile(f"^{OPEN_FORM}:"))(self.open_form)
        app.action(re.compile(f"^{EDIT}:"))(self.open_edit)
        app.action(re.compile(f"^{RESPOND}:"))(self.respond)
        app.view("hitl_answer")(self.submit)
        app.command("/hitl")(self.command)

    # -- starting runs ---------------------------------------------------------

    async def mention(
        self, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        thread = str(event.get("thread_ts") or event["ts"])
        await self._start(body, event, thread, str(context.bot_user_id or ""))

    async def message(
        self, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        if event.get("subtype") or event.get("bot_id") or not event.get("user"):
            return  # edits, joins, and bots (ourselves included) start nothing
        thread = str(event.get("thread_ts") or event["ts"])
        if event.get("channel_type") != "im":
            # In a channel only a reply in one of our threads continues it; a
            # reply that mentions us arrives as app_mention too, so skip it here.
            if thread == event["ts"] or f"<@{context.bot_user_id}>" in str(event.get("text")):
                return
            key = f"{event['channel']}:{thread}"
            if not await self.service().history(SURFACE, key, limit=1):
                return
        await self._start(body, event, thread, str(context.bot_user_id or ""))

    async def _start(
        self, body: dict[str, Any], event: dict[str, Any], thread: str, bot_user: str
    ) -> None:
        team = str(body.get("team_id") or event.get("team") or "")
        channel, user = str(event["channel"]), str(event["user"])
        where = Conversation(
            surface=SURFACE,
            scope=f"{team}:{channel}",
            key=f"{channel}:{thread}",
            thread=thread,
            reference={"team": team, "channel": channel, "thread_ts": thread},
        )
        # Only our own mention goes: "ask <@U123> to approve" keeps the person named.
        text = re.sub(rf"<@{re.escape(bot_user)}>\s*", "", str(event.get("text") or "")).strip()
        key = str(body.get("event_id") or f"{channel}:{event['ts']}")
        try:
            await self.service().start(where, responder(team, user), text, key=key)
        except ChatsOff:
            self.later(self._ephemeral(team, channel, user, AGENTS_ONLY))
        except NotStarted:
            self.later(self._ephemeral(team, channel, user, NOT_STARTED))

    # -- answering -------------------------------------------------------------

    async def click(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        request: AsyncBoltRequest | None = None,
    ) -> None:
        """Over HTTP the request's key goes with the answer: the bridge keeps no record of
        a click, its outcome's write does (a replay is ``Replayed``: acked, nobody told)."""
        token, answer = parse_value(str(action.get("value") or ""))
        team, channel, user = who_where(body)
        outcome = await self._redeem(
            token, answer, team, channel, user, body, once_key=click_key(request)
        )
        await ack()
        if outcome is not None and not isinstance(outcome, outcomes.Redeemed | outcomes.Replayed):
            self.later(self._report(outcome, team, channel, user))

    async def reject(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await self._open_at_once(ack, body, action, "reject", reject_modal)

    async def respond(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await self._open_at_once(ack, body, action, "respond", respond_modal)

    async def _open_at_once(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        kind: FormKind,
        modal: Callable[[Metadata], dict[str, Any]],
    ) -> None:
        """A modal drawn from the button alone, with no read of the question first."""
        await ack()
        token, _ = parse_value(str(action.get("value") or ""))
        _, channel, _ = who_where(body)
        metadata = Metadata(token, kind, channel, _message_ts(body), _thread(body))
        # views.open must use the trigger within 3 s: right after the ack, not queued.
        self.later(self._open(body, modal(metadata)))

    async def open_edit(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        self.later(self._open_on_question(body, action, edit=True))

    async def open_form(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        self.later(self._open_on_question(body, action, edit=False))

    async def _open_on_question(
        self, body: dict[str, Any], action: dict[str, Any], *, edit: bool
    ) -> None:
        """The edit or the answer modal: both are drawn from the open question's record, so a
        question closed meanwhile is told instead."""
        token, _ = parse_value(str(action.get("value") or ""))
        team, channel, user = who_where(body)
        question = await self._question(token, team, channel)
        if question is None:
            await self._ephemeral(team, channel, user, QUESTION_CLOSED)
            return
        kind = "edit" if edit else form_kind(question.payload)
        metadata = Metadata(token, kind, channel, _message_ts(body), _thread(body))
        if edit and isinstance(question.payload, ApprovalPayload):
            view = edit_modal(question.payload, metadata)
        else:
            schema = self._schema(question.name)
            view = answer_modal(question.payload, schema, metadata)
        await self._open(body, view)

    async def submit(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        metadata = Metadata.parse(str(view.get("private_metadata") or ""))
        if metadata is None:
            await ack()
            log.warning("a modal came back without our metadata; ignored")
            return
        team, _, user = who_where(body)
        # A question closed meanwhile asks nothing: the redeem says why.
        payload: Payload = OtherPayload({})
        schema: Mapping[str, Any] = {}
        if metadata.kind not in ("reject", "respond"):
            question = await self._question(metadata.token, team, metadata.channel)
            if question is not None:
                payload = question.payload
                schema = self._schema(question.name)
        values = (view.get("state") or {}).get("values") or {}
        answer = answer_from_state(metadata, payload, schema, values)
        outcome = await self._redeem(metadata.token, answer, team, metadata.channel, user, body)
        if isinstance(outcome, outcomes.AnswerInvalid):
            errors = errors_for(metadata, payload, schema, outcome.fields)
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if outcome is not None and not isinstance(outcome, outcomes.Redeemed):
            self.later(self._report(outcome, team, metadata.channel, user))

    async def command(
        self,
        ack: AsyncAck,
        command: dict[str, Any],
        respond: AsyncRespond,
        request: AsyncBoltRequest | None = None,
    ) -> None:
        """``/hitl <command>``: run as the signed request's user; only they see the reply.

        Acked with the result when it is ready within ``ACK_BUDGET_SECONDS``
        (Slack allows 3 s); otherwise acked at once and the result sent
        through the command's ``response_url``, ephemeral as well.
        """
        admin = self.admin()
        if admin is None:
            await ack(text=ADMIN_COMMANDS_UNAVAILABLE, response_type="ephemeral")
            return
        team, user = str(command.get("team_id", "")), str(command.get("user_id", ""))
        text = ids_in(team, str(command.get("text") or ""))
        task = asyncio.ensure_future(
            self._admin_command(admin, team, user, text, key=command_key(command, request))
        )
        done, _ = await asyncio.wait({task}, timeout=ACK_BUDGET_SECONDS)
        if done:
            await ack(response_type="ephemeral", **admin_message(task.result()))
            return
        await ack(text=WORKING_ON_IT, response_type="ephemeral")
        self.later(self._respond_when_done(task, respond))

    async def _admin_command(
        self, admin: AdminService, team: str, user: str, text: str, *, key: str
    ) -> results.AdminResult:
        who = responder(team, user)
        if not admin.is_admin(who) and await self._in_admin_group(who):
            who = Responder(who.id, who.name, is_admin=True)
        return await admin.handle(text, who=who, key=key)

    async def _in_admin_group(self, who: Responder) -> bool:
        if self.directory is None:
            return False
        for group in self.admin_groups:
            if await self.directory.is_member(group, who):
                return True
        return False

    async def _respond_when_done(
        self, task: asyncio.Future[results.AdminResult], respond: AsyncRespond
    ) -> None:
        result = await task
        await respond(response_type="ephemeral", replace_original=False, **admin_message(result))

    # -- helpers ---------------------------------------------------------------

    async def _redeem(
        self,
        token: str,
        answer: Mapping[str, Any],
        team: str,
        channel: str,
        user: str,
        body: dict[str, Any],
        *,
        once_key: str = "",
    ) -> outcomes.RedeemOutcome | None:
        """The outcome; None if it was too slow for Slack's 3 s and will be reported later."""
        who = responder(team, user, name=display_name(body))
        scope = f"{team}:{channel}"
        work = self.service().redeem(token, answer, responder=who, scope=scope, once_key=once_key)
        task = asyncio.ensure_future(work)
        done, _ = await asyncio.wait({task}, timeout=ACK_BUDGET_SECONDS)
        if done:
            return task.result()
        log.warning("redeem is slow; acking before it finishes")
        self.later(self._report_when_done(task, team, channel, user))
        return None

    async def _report_when_done(
        self,
        task: asyncio.Future[outcomes.RedeemOutcome],
        team: str,
        channel: str,
        user: str,
    ) -> None:
        outcome = await task
        if isinstance(outcome, outcomes.Redeemed):
            # Acked before the spend: say it landed, or the person is left guessing.
            await self._ephemeral(team, channel, user, LATE_ANSWER_RECORDED)
        elif not isinstance(outcome, outcomes.Replayed):
            await self._report(outcome, team, channel, user)

    async def _report(self, outcome: outcomes.Refusal, team: str, channel: str, user: str) -> None:
        text = refusal_text(_shown(outcome))
        if isinstance(outcome, outcomes.NotAllowedToAnswer) and outcome.may is not None:
            # Who may answer now, as the redeem decided it (an escalation step may have
            # added people since the message was drawn).
            text = audience(outcome.may)
        await self._ephemeral(team, channel, user, text)

    async def _ephemeral(self, team: str, channel: str, user: str, text: str) -> None:
        try:
            await self.surface.post_ephemeral(team, channel, user, text)
        except DeliveryError as error:
            log.warning("could not tell a person why: %s", error.reason)

    async def _open(self, body: dict[str, Any], view: dict[str, Any]) -> None:
        team, _, _ = who_where(body)
        try:
            await self.surface.call(
                team, "views.open", trigger_id=body.get("trigger_id"), view=view
            )
        except DeliveryError as error:
            log.warning("could not open the form: %s", error.reason)

    async def _question(self, token: str, team: str, channel: str) -> Question | None:
        """The open question ``token`` answers, posted in ``channel`` (threaded or not, on
        its first route or a further one)."""
        found = await self.service().posted_question(
            token, surface=SURFACE, scope=f"{team}:{channel}"
        )
        return found.question if found is not None else None

    def _schema(self, name: str) -> dict[str, Any]:
        registration = self.service().views.registration(name)
        return registration.response_schema.model_json_schema() if registration else {}


def _shown(refusal: outcomes.Refusal) -> outcomes.Refusal:
    """``refusal`` with what it quotes (who closed it, the question's and the answer's words
    in a validation problem) as mrkdwn shows it: text, never a mention or a link."""
    match refusal:
        case outcomes.AlreadyAnswered(by=by) | outcomes.AlreadyCancelled(by=by):
            return dataclasses.replace(refusal, by=name_shown(by))
        case outcomes.AnswerInvalid(fields=fields):
            shown = {
                display(k, markup="slack"): display(v, markup="slack") for k, v in fields.items()
            }
            return outcomes.AnswerInvalid(shown)
        case _:
            return refusal


def _message_ts(body: Mapping[str, Any]) -> str:
    return str(
        (body.get("message") or {}).get("ts") or (body.get("container") or {}).get("message_ts", "")
    )


def _thread(body: Mapping[str, Any]) -> str:
    message = body.get("message") or {}
    return str(message.get("thread_ts") or message.get("ts") or "")
