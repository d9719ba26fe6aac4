"""``Bridge``: ask a person through the agents API and wait for the answer."""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel

from bot.client._forms import model_form_schema
from bot.client._http import TRANSIENT_STATUSES, Http
from bot.client.errors import (
    ApiError,
    BridgeError,
    Cancelled,
    Expired,
    RateLimited,
    TransportError,
    WaitTimeout,
)
from bot.client.form_schema import check_form_schema
from bot.client.models import (
    ApprovalPayload,
    AskUserItem,
    AskUserPayload,
    CancelRequest,
    CreateApproval,
    CreateAskUser,
    CreateForm,
    FormPayload,
    QuestionObject,
    QuestionPage,
    Route,
)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MAX_WAIT_SLICE = 30
# How long a waiter keeps retrying an unreachable bridge past the question's
# own expiry when the caller set no deadline: by then the bridge, once back,
# answers "expired" at once, so longer would wait on nothing.
EXPIRY_GRACE_SECONDS = 300.0
_FIRST_BACKOFF = 0.2
_MAX_BACKOFF = 2.0
_CREATE_ATTEMPTS = 3
_USER_AGENT = "bot-client/1"

RouteLike = Route | Mapping[str, Any] | str
QuestionsLike = (
    AskUserPayload | Mapping[str, Any] | Sequence[AskUserItem | Mapping[str, Any] | str] | str
)


def route_of(route: RouteLike) -> Route:
    """A ``Route`` from itself, a mapping, or ``"surface:conversation[/thread]"``."""
    if isinstance(route, Route):
        return route
    if isinstance(route, str):
        surface, sep, rest = route.partition(":")
        conversation, _, thread = rest.partition("/")
        if not sep:
            raise ValueError(f"route {route!r} must read surface:conversation, e.g. slack:C123")
        return Route.model_validate(
            {"surface": surface, "conversation": conversation, "thread": thread or None}
        )
    return Route.model_validate(dict(route))


def _questions_of(questions: QuestionsLike) -> AskUserPayload:
    if isinstance(questions, AskUserPayload):
        return questions
    if isinstance(questions, str):
        return AskUserPayload(questions=[AskUserItem(question=questions)])
    if isinstance(questions, Mapping):
        return AskUserPayload.model_validate(dict(questions))
    items = [
        AskUserItem(question=q) if isinstance(q, str) else AskUserItem.model_validate(q)
        for q in questions
    ]
    return AskUserPayload(questions=items)


def _identity(question: QuestionObject) -> QuestionObject:
    return question


def _into(model: type[M]) -> Callable[[QuestionObject], M]:
    def parse(question: QuestionObject) -> M:
        if question.status == "answered":
            return model.model_validate(question.answer or {})
        raise outcome_error(question)

    return parse


def outcome_error(question: QuestionObject) -> BridgeError:
    """The error saying how a question closed without the answer a caller needed."""
    if question.status == "expired":
        return Expired("Nobody answered the question before it expired.", question=question)
    if question.status == "cancelled":
        return Cancelled(question.cancel_reason or "", question=question)
    return BridgeError(f"The question is {question.status}.")


class Question(Generic[T]):
    """A question asked; ``wait`` returns what its parser makes of the closed object.

    ``ask``, ``approve`` and ``form(schema=...)`` give a ``Question[QuestionObject]``:
    ``wait`` returns the closed object whatever the outcome (answered, expired
    or cancelled), and the caller reads ``status`` and ``answer``.
    ``form(model=M)`` gives a ``Question[M]``: ``wait`` returns the answer as a
    validated ``M``, and raises ``Expired`` or ``Cancelled`` when there is none.
    """

    def __init__(
        self, bridge: Bridge, question: QuestionObject, parse: Callable[[QuestionObject], T]
    ) -> None:
        self._bridge = bridge
        self._object = question
        self._parse = parse

    def __repr__(self) -> str:
        return f"Question({self.id!r}, status={self._object.status!r})"

    @property
    def id(self) -> str:
        return self._object.id

    @property
    def object(self) -> QuestionObject:
        """The question as last seen."""
        return self._object

    async def refresh(self) -> QuestionObject:
        self._object = await self._bridge.get(self.id)
        return self._object

    async def cancel(self, reason: str = "") -> QuestionObject:
        self._object = await self._bridge.cancel(self.id, reason)
        return self._object

    # The contract's name: a deadline across many polls and retries, not one call's.
    async def wait(self, timeout: float | None = None) -> T:  # noqa: ASYNC109
        """Long-poll until the question closes; ``WaitTimeout`` after ``timeout`` seconds.

        The bridge holds each poll for up to thirty seconds. A bridge that
        restarts or is briefly unreachable is retried with a short backoff
        until the deadline (or, with none, until a while past the question's
        expiry), so a wait spans a restart and still returns the answer.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        backoff = _FIRST_BACKOFF
        polled = False
        while not self._object.closed:
            remaining = math.inf if deadline is None else deadline - loop.time()
            if remaining <= 0 and polled:
                raise WaitTimeout(
                    f"Question {self.id} is still open after {timeout} seconds.",
                    question=self._object,
                )
            # Whole seconds for the bridge, while the deadline itself cuts the
            # last slice short: no spinning on wait=0 polls near the end.
            if remaining <= 0:
                slice_seconds = 0
            elif remaining >= MAX_WAIT_SLICE:
                slice_seconds = MAX_WAIT_SLICE
            else:
                slice_seconds = math.ceil(remaining)
            limit = None if deadline is None or slice_seconds == 0 else remaining
            try:
                async with asyncio.timeout(limit):
                    self._object = await self._bridge._poll(self.id, slice_seconds)
                backoff = _FIRST_BACKOFF
            except TimeoutError:
                polled = True
                continue
            except (TransportError, RateLimited, ApiError) as exc:
                if not _transient(exc) or not self._may_retry(deadline, loop.time()):
                    raise
                # Jitter, not a secret: spreads many waiters' retries after a restart.
                pause = min(backoff, _MAX_BACKOFF) * (0.5 + random.random() / 2)  # noqa: S311
                if deadline is not None:
                    pause = min(pause, max(deadline - loop.time(), 0))
                await asyncio.sleep(pause)
                backoff *= 2
            polled = True
        return self._parse(self._object)

    def _may_retry(self, deadline: float | None, now: float) -> bool:
        if deadline is not None:
            return now < deadline
        expires = datetime.fromisoformat(self._object.expires_at.replace("Z", "+00:00"))
        return time.time() < expires.timestamp() + EXPIRY_GRACE_SECONDS


def _transient(exc: BridgeError) -> bool:
    if isinstance(exc, TransportError | RateLimited):
        return True
    return isinstance(exc, ApiError) and exc.status in TRANSIENT_STATUSES


class Bridge:
    """The agents API, asynchronously. Use as ``async with Bridge(url, key) as bridge``.

    Every ``ask``/``approve``/``form`` sends an idempotency key (a fresh UUID
    unless given), so a create lost to a dropped connection is retried safely:
    the bridge answers the retry with the question it already made.
    """

    def __init__(self, url: str, api_key: str, *, request_timeout: float = 30.0) -> None:
        self._http = Http(url, api_key, user_agent=_USER_AGENT)
        self._request_timeout = request_timeout

    def __repr__(self) -> str:
        return f"Bridge({self._http!r})"

    async def __aenter__(self) -> Bridge:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.close()

    async def ask(
        self,
        questions: QuestionsLike,
        *,
        route: RouteLike,
        idempotency_key: str | None = None,
        answerers: Sequence[str] | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
    ) -> Question[QuestionObject]:
        """Ask one to five questions; a plain string is one free-text question."""
        body = CreateAskUser.model_validate(
            _create_fields(
                "ask_user",
                _questions_of(questions).model_dump(mode="json"),
                route=route,
                idempotency_key=idempotency_key,
                answerers=answerers,
                ttl_seconds=ttl_seconds,
                callback_url=callback_url,
                metadata=metadata,
                run_ref=run_ref,
            )
        )
        return Question(self, await self._create(body), _identity)

    async def approve(
        self,
        action: str,
        summary: str,
        *,
        arguments: Mapping[str, Any],
        risk: str,
        route: RouteLike,
        answerers: Sequence[str],
        idempotency_key: str | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
    ) -> Question[QuestionObject]:
        """Ask ``answerers`` to approve ``action``; the answer is a decision and a comment."""
        payload = ApprovalPayload.model_validate(
            {"action": action, "summary": summary, "arguments": dict(arguments), "risk": risk}
        )
        body = CreateApproval.model_validate(
            _create_fields(
                "approval",
                payload.model_dump(mode="json"),
                route=route,
                idempotency_key=idempotency_key,
                answerers=answerers,
                ttl_seconds=ttl_seconds,
                callback_url=callback_url,
                metadata=metadata,
                run_ref=run_ref,
            )
        )
        return Question(self, await self._create(body), _identity)

    @overload
    async def form(
        self,
        title: str,
        message: str,
        *,
        model: type[M],
        route: RouteLike,
        idempotency_key: str | None = ...,
        answerers: Sequence[str] | None = ...,
        ttl_seconds: int | None = ...,
        callback_url: str | None = ...,
        metadata: Mapping[str, Any] | None = ...,
        run_ref: str | None = ...,
    ) -> Question[M]: ...

    @overload
    async def form(
        self,
        title: str,
        message: str,
        *,
        schema: Mapping[str, Any],
        route: RouteLike,
        idempotency_key: str | None = ...,
        answerers: Sequence[str] | None = ...,
        ttl_seconds: int | None = ...,
        callback_url: str | None = ...,
        metadata: Mapping[str, Any] | None = ...,
        run_ref: str | None = ...,
    ) -> Question[QuestionObject]: ...

    async def form(
        self,
        title: str,
        message: str,
        *,
        schema: Mapping[str, Any] | None = None,
        model: type[BaseModel] | None = None,
        route: RouteLike,
        idempotency_key: str | None = None,
        answerers: Sequence[str] | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
    ) -> Question[Any]:
        """A form from a JSON schema or a pydantic model; refused at once outside the subset."""
        if (schema is None) == (model is None):
            raise ValueError("form() takes exactly one of schema= or model=")
        parse: Callable[[QuestionObject], Any]
        if model is not None:
            form_schema = model_form_schema(model)
            parse = _into(model)
        else:
            form_schema = dict(schema or {})
            check_form_schema(form_schema)
            parse = _identity
        payload = FormPayload.model_validate(
            {"title": title, "message": message, "schema": form_schema}
        )
        body = CreateForm.model_validate(
            _create_fields(
                "form",
                payload.model_dump(mode="json"),
                route=route,
                idempotency_key=idempotency_key,
                answerers=answerers,
                ttl_seconds=ttl_seconds,
                callback_url=callback_url,
                metadata=metadata,
                run_ref=run_ref,
            )
        )
        return Question(self, await self._create(body), parse)

    async def question(self, question_id: str, *, model: type[M] | None = None) -> Question[Any]:
        """A handle on a question asked earlier, e.g. by a process that has since restarted."""
        found = await self.get(question_id)
        return Question(self, found, _identity if model is None else _into(model))

    async def get(self, question_id: str) -> QuestionObject:
        _, data = await self._http.request("GET", _path(question_id), seconds=self._request_timeout)
        return QuestionObject.model_validate(data)

    async def cancel(self, question_id: str, reason: str = "") -> QuestionObject:
        """Cancel an open question; ``Conflict`` (with ``.question``) if it already closed."""
        body = CancelRequest(reason=reason).model_dump(mode="json")
        _, data = await self._http.request(
            "POST", f"{_path(question_id)}/cancel", body=body, seconds=self._request_timeout
        )
        return QuestionObject.model_validate(data)

    async def _poll(self, question_id: str, wait: int) -> QuestionObject:
        _, data = await self._http.request(
            "GET",
            _path(question_id),
            params={"wait": str(wait)},
            seconds=wait + self._request_timeout,
        )
        return QuestionObject.model_validate(data)

    async def _create(self, body: CreateAskUser | CreateApproval | CreateForm) -> QuestionObject:
        # Only top-level nulls go: a null inside metadata or arguments is data.
        wire = {k: v for k, v in body.model_dump(mode="json").items() if v is not None}
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                _, data = await self._http.request(
                    "POST", "/v1/questions", body=wire, seconds=self._request_timeout
                )
                return QuestionObject.model_validate(data)
            except TransportError:
                # Safe to repeat: the idempotency key makes a second create the first.
                if attempt == _CREATE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(_FIRST_BACKOFF * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def list(
        self,
        *,
        status: str | None = None,
        run_ref: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> QuestionPage:
        """One page of this key's questions, newest first."""
        params = {"limit": str(limit)}
        for key, value in (("status", status), ("run_ref", run_ref), ("cursor", cursor)):
            if value is not None:
                params[key] = value
        _, data = await self._http.request(
            "GET", "/v1/questions", params=params, seconds=self._request_timeout
        )
        return QuestionPage.model_validate(data)


def _path(question_id: str) -> str:
    # An id is opaque; quoting keeps a slash in one from naming another path.
    return f"/v1/questions/{quote(question_id, safe='')}"


def _create_fields(
    kind: str,
    payload: dict[str, Any],
    *,
    route: RouteLike,
    idempotency_key: str | None,
    answerers: Sequence[str] | None,
    ttl_seconds: int | None,
    callback_url: str | None,
    metadata: Mapping[str, Any] | None,
    run_ref: str | None,
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "kind": kind,
        "payload": payload,
        "route": route_of(route),
        "idempotency_key": idempotency_key or str(uuid.uuid4()),
    }
    optional: dict[str, Any] = {
        "answerers": None if answerers is None else list(answerers),
        "ttl_seconds": ttl_seconds,
        "callback_url": callback_url,
        "metadata": None if metadata is None else dict(metadata),
        "run_ref": run_ref,
    }
    fields.update({k: v for k, v in optional.items() if v is not None})
    return fields
