"""The agents API's questions: asked, read, waited on, listed and cancelled.

An API question is asked through the one lifecycle (``ask_remote``): its
carrier run names the route and is REMOTE, since the agent that waits on
it runs elsewhere. From then on it is a question like any other: posted by
the outbox, answered through the same redeem, expired by the sweeper,
listed and changed by admin commands, and its close owes the webhook.

Its ids come from the API key's name and the idempotency key, so a retried
or raced POST finds the first question instead of making a second.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.api._errors import (
    ALREADY_CLOSED,
    LINKS_NEED_SIGN_IN,
    NO_LINKS,
    NOT_FOUND,
    ROUTE_FORBIDDEN,
    SAME_KEY_OTHER_BODY,
    STORE_BUSY,
    ApiRefusal,
)
from bot.api._objects import checked_object, cursor_for, position_of
from bot.api._routes import Unroutable, check_further, conversation_for
from bot.api._waiters import Waiters
from bot.api.links import LINK_PREFIX, AnswerLinks, link_ids
from bot.contract.models import ANYONE, CreateApproval, CreateAskUser, CreateForm, Route
from bot.contract.payloads import payload_of
from bot.human.capability import HumanInteractionCapability
from bot.questions import posts
from bot.questions.records import (
    ApiKey,
    ApiRequest,
    ApiView,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.service.answering.outcomes import Responder
from bot.service.running.runs import RunService

log = logging.getLogger(__name__)

Create = CreateAskUser | CreateApproval | CreateForm
# None: the callback may be used; else the sentence refusing it.
CheckCallback = Callable[[str], Awaitable[str | None]]
MAX_WAIT_SECONDS = 30


def body_hash(body: dict[str, Any]) -> str:
    """The request's fingerprint, whatever the order of its keys."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _ids(key: ApiKey, idempotency_key: str) -> tuple[str, str]:
    # From the key's id: a new key of a revoked one's name may reuse its idempotency keys.
    digest = hashlib.sha256(f"{key.key_id}\0{idempotency_key}".encode()).hexdigest()
    return f"run_api_{digest[:20]}", f"int_{digest[:24]}"


def _summary(request: Create) -> str:
    match request:
        case CreateAskUser(payload=payload):
            return payload.questions[0].question
        case CreateApproval(payload=payload):
            return payload.summary
        case CreateForm(payload=payload):
            return payload.title


def _dumped(route: Route) -> dict[str, Any]:
    return route.model_dump(exclude_none=True)


@dataclass(frozen=True, slots=True)
class Created:
    """The question object, and whether this request made it (201) or found it (200)."""

    question: dict[str, Any]
    created: bool


class ApiQuestions:
    """What each ``/v1`` handler does, once it knows which key is asking."""

    def __init__(
        self,
        *,
        service: RunService,
        capability: HumanInteractionCapability,
        check_callback: CheckCallback,
        waiters: Waiters,
        clock: Callable[[], float] = time.time,
        links: AnswerLinks | None = None,
        link_signin: bool = False,
    ) -> None:
        """``links`` mints the answer links of ``link:<id>`` answerers; without it they are
        refused (422), since nobody could reach the question. So are they with
        ``link_signin`` (``BOT_LINK_SIGNIN``): a link's page then asks for a console sign-in
        as its answerer, and nobody signs in as ``link:<id>``."""
        self._links = links
        self._link_signin = link_signin
        self._service = service
        self._capability = capability
        self._stores = service.stores
        self._check_callback = check_callback
        self._waiters = waiters
        self._clock = clock

    async def create(self, key: ApiKey, request: Create, raw: dict[str, Any]) -> Created:
        routes = request.posted_on
        for route in routes:
            if not key.may_use(route.surface, route.conversation):
                named = f"{route.surface}:{route.conversation}"
                raise ApiRefusal("forbidden", ROUTE_FORBIDDEN.format(route=named))
        fingerprint = body_hash(raw)
        found = await self._stores.api.by_idempotency_key(key.key_id, request.idempotency_key)
        if found is not None:
            return self._same(found, fingerprint)
        if request.callback_url is not None:
            refusal = await self._check_callback(request.callback_url)
            if refusal is not None:
                raise ApiRefusal("invalid_request", refusal)
        try:
            check_further(routes)
            places = [
                await conversation_for(route, self._service.surfaces, self._stores.runs)
                for route in routes
            ]
        except Unroutable as unroutable:
            raise ApiRefusal("unprocessable", unroutable.sentence) from None
        where, route = places[0], routes[0]
        if link_ids(request.answerers or ()):
            if self._links is None:
                raise ApiRefusal("unprocessable", NO_LINKS)
            if self._link_signin:
                raise ApiRefusal("unprocessable", LINKS_NEED_SIGN_IN)
        registration = self._capability.registration(request.kind)
        if registration is None:  # composition fault: the API accepts its three kinds
            raise ApiRefusal(
                "unprocessable", f"This bridge does not answer {request.kind} questions."
            )
        asked = request.payload.model_dump(by_alias=True)
        if isinstance(request, CreateApproval):
            # ``allow`` rides beside ``policy``; the question keeps it with what it asks.
            asked["allow"] = request.allowed
        payload = registration.validate_payload(asked)
        now = self._clock()
        run_id, interrupt_id = _ids(key, request.idempotency_key)
        question = Question(
            interrupt_id=interrupt_id,
            run_id=run_id,
            scope=where.scope,
            name=request.kind,
            tool_call_id=f"api_{interrupt_id[4:16]}",
            checkpoint_id="",
            payload=payload_of(request.kind, payload),
            issued_at=float(int(now)),
            expires_at=float(int(now) + request.ttl_seconds),
            thread_id=where.thread,
            # The list in force, as the object shows it: anyone in the conversation by default.
            answerers=tuple(request.answerers or (ANYONE,)),
            policy=request.policy,
            # Each further route: where it is posted, and the scope its answers carry.
            posts=tuple(
                posts.post_of(
                    r.key, there.surface, there.scope, {**there.to_json(), "route": _dumped(r)}
                )
                for r, there in zip(routes[1:], places[1:], strict=True)
            ),
        )
        run = RunRecord(
            run_id=run_id,
            scope=where.scope,
            surface=where.surface,
            requester=f"api:{key.name}",
            text=_summary(request),
            created_at=now,
            updated_at=now,
            conversation={
                **where.to_json(),
                "route": _dumped(route),
                **({"routes": [_dumped(r) for r in routes]} if request.routes else {}),
            },
            status=RunStatus.REMOTE,
        )
        api_request = ApiRequest(
            interrupt_id=interrupt_id,
            key_name=key.name,
            key_id=key.key_id,
            idempotency_key=request.idempotency_key,
            body_hash=fingerprint,
            kind=request.kind,
            created_at=now,
            callback_url=request.callback_url,
            metadata=request.metadata,
            run_ref=request.run_ref,
        )
        try:
            written = await self._service.questions.ask_remote(run, question, api_request)
        except Exception as error:  # noqa: BLE001 - a full disk, a store gone away
            log.warning("could not store an API question (%s)", type(error).__name__)
            raise ApiRefusal("unavailable", STORE_BUSY) from None
        if written is None:
            # Raced by the same key: the first write stands.
            found = await self._stores.api.by_idempotency_key(key.key_id, request.idempotency_key)
            if found is None:
                raise ApiRefusal("unavailable", STORE_BUSY)
            return self._same(found, fingerprint)
        self._service.deliverer.kick()
        shown = checked_object(ApiView(api_request, question, run))
        if self._links is not None and link_ids(question.answerers):
            # Only here, on the 201: the links are capabilities and are never kept or shown again.
            shown["links"] = {
                link: self._links.url_for(question, f"{LINK_PREFIX}{link}")
                for link in link_ids(question.answerers)
            }
        return Created(shown, created=True)

    def _same(self, found: ApiView, fingerprint: str) -> Created:
        if found.request.body_hash != fingerprint:
            key = found.request.idempotency_key
            raise ApiRefusal("conflict", SAME_KEY_OTHER_BODY.format(key=key))
        return Created(checked_object(found), created=False)

    async def view(self, key: ApiKey, interrupt_id: str) -> ApiView:
        view = await self._stores.api.get(interrupt_id)
        # Another key's question is not found, not forbidden: ids leak nothing.
        if view is None or view.request.key_id != key.key_id:
            raise ApiRefusal("not_found", NOT_FOUND.format(id=interrupt_id))
        return view

    async def get(self, key: ApiKey, interrupt_id: str, *, wait: float = 0.0) -> dict[str, Any]:
        """The question's object; while it is open, after up to ``wait`` seconds for its close."""
        view = await self.view(key, interrupt_id)
        open_now = view.question.status is QuestionStatus.OUTSTANDING
        if wait <= 0 or not open_now or self._waiters.closing:
            return checked_object(view)
        event, forget = self._waiters.register(view.question.run_id)
        try:
            # Read again once registered: a close in between would otherwise go unseen.
            view = await self.view(key, interrupt_id)
            if view.question.status is QuestionStatus.OUTSTANDING:
                # Not held through the wait: with ten thousand waiting, the question, its run
                # and its request, each parsed, would be most of what a waiter costs.
                del view
                await self._until_closed(key, interrupt_id, event, wait)
                view = await self.view(key, interrupt_id)
        finally:
            forget()
        return checked_object(view)

    async def _until_closed(
        self, key: ApiKey, interrupt_id: str, event: asyncio.Event, wait: float
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while (left := deadline - loop.time()) > 0:
            try:
                # A deadline on this task, where ``wait_for`` would wrap the wait in a task
                # of its own: one task fewer per waiter.
                async with asyncio.timeout(left):
                    await event.wait()
            except TimeoutError:
                return
            event.clear()
            if self._waiters.closing:
                return
            # Woken by a change of the run: a close, or something else (an extension).
            # Read, not kept: the next wait holds no copy of the question.
            status = (await self.view(key, interrupt_id)).question.status
            if status is not QuestionStatus.OUTSTANDING:
                return

    async def page(
        self,
        key: ApiKey,
        *,
        status: QuestionStatus | None,
        run_ref: str | None,
        limit: int,
        cursor: str | None,
    ) -> dict[str, Any]:
        try:
            before = position_of(cursor) if cursor is not None else None
        except ValueError as bad:
            raise ApiRefusal("invalid_request", f"{bad}.") from None
        views = await self._stores.api.page(
            key.key_id, status=status, run_ref=run_ref, before=before, limit=limit + 1
        )
        more = len(views) > limit
        views = views[:limit]
        return {
            "data": [checked_object(view) for view in views],
            "next_cursor": cursor_for(views[-1]) if more and views else None,
        }

    async def cancel(self, key: ApiKey, interrupt_id: str, reason: str) -> dict[str, Any]:
        view = await self.view(key, interrupt_id)
        # The audit records the key by its id; people read its name.
        who = Responder(f"api:{key.key_id}", f"API key {key.name}")
        if view.question.status is QuestionStatus.OUTSTANDING and await self._service.cancel(
            interrupt_id, by=who, reason=reason
        ):
            return checked_object(await self.view(key, interrupt_id))
        latest = checked_object(await self.view(key, interrupt_id))
        message = ALREADY_CLOSED.format(status=latest["status"])
        raise ApiRefusal("conflict", message, question=latest)
