"""``Bridge``: ask a person through the agents API and wait for the answer."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel

from bot.client._forms import form_schema_of
from bot.client._http import Http
from bot.client._question import Question, identity, into, transient
from bot.client.errors import BridgeError, RateLimited
from bot.contract.asking import AskOptions
from bot.contract.models import (
    ApprovalPayload,
    AskUserItem,
    AskUserPayload,
    CancelRequest,
    CreateApproval,
    CreateAskUser,
    CreateForm,
    FormPayload,
    Policy,
    QuestionObject,
    QuestionPage,
)
from bot.contract.routes import RouteLike as RouteLike
from bot.contract.routes import RoutesLike as RoutesLike
from bot.contract.routes import route_of as route_of

M = TypeVar("M", bound=BaseModel)

_CREATE_BACKOFF = 0.2
_CREATE_ATTEMPTS = 3
# The longest Retry-After a create waits out by itself before raising RateLimited.
_CREATE_MAX_PAUSE = 5.0
_USER_AGENT = "bot-client/1"

QuestionsLike = (
    AskUserPayload | Mapping[str, Any] | Sequence[AskUserItem | Mapping[str, Any] | str] | str
)


def questions_of(questions: QuestionsLike) -> AskUserPayload:
    """The ``ask_user`` payload a question, a list of them or a payload stands for."""
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


class Bridge:
    """The agents API, asynchronously. Use as ``async with Bridge(url, key) as bridge``.

    Every ``ask``/``approve``/``form`` sends an idempotency key (a fresh UUID
    unless given), so a create lost to a dropped connection or an outage
    (502, 503, 504, 429) is retried safely: the bridge answers the retry
    with the question it already made.
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
        route: RoutesLike,
        idempotency_key: str | None = None,
        answerers: Sequence[str] | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
    ) -> Question[QuestionObject]:
        """Ask one to five questions; a plain string is one free-text question."""
        payload = questions_of(questions)
        options = AskOptions.of(
            route=route,
            answerers=answerers,
            ttl_seconds=ttl_seconds,
            callback_url=callback_url,
            metadata=metadata,
            run_ref=run_ref,
        )
        return await self.create(payload, options, idempotency_key=idempotency_key)

    async def approve(
        self,
        action: str,
        summary: str,
        *,
        arguments: Mapping[str, Any],
        risk: str,
        route: RoutesLike,
        answerers: Sequence[str],
        idempotency_key: str | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
        policy: Policy | Mapping[str, Any] | None = None,
        allow: Sequence[str] | None = None,
        arguments_schema: Mapping[str, Any] | None = None,
    ) -> Question[QuestionObject]:
        """Ask ``answerers`` to approve ``action``; the answer is a decision and a comment.

        ``policy``: a quorum, reminders, escalation, no self-approval, a
        fail-closed expiry (``Policy``; docs/api.md, "Policies"). ``allow``: the
        decisions the approver may make, ``edit`` (the answer then carries the
        ``arguments`` to run with) and ``respond`` (a ``message`` instead) beside
        approve and reject; ``arguments_schema``: what an edit must fit.
        """
        asked: dict[str, Any] = {
            "action": action,
            "summary": summary,
            "arguments": dict(arguments),
            "risk": risk,
        }
        if arguments_schema is not None:
            asked["arguments_schema"] = dict(arguments_schema)
        payload = ApprovalPayload.model_validate(asked)
        options = AskOptions.of(
            route=route,
            answerers=answerers,
            ttl_seconds=ttl_seconds,
            callback_url=callback_url,
            metadata=metadata,
            run_ref=run_ref,
            policy=policy,
            allow=allow,
        )
        return await self.create(payload, options, idempotency_key=idempotency_key)

    @overload
    async def form(
        self,
        title: str,
        message: str,
        *,
        model: type[M],
        route: RoutesLike,
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
        route: RoutesLike,
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
        route: RoutesLike,
        idempotency_key: str | None = None,
        answerers: Sequence[str] | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
    ) -> Question[Any]:
        """A form from a JSON schema or a pydantic model; refused at once outside the subset."""
        form_schema = form_schema_of(schema=schema, model=model)
        parse: Callable[[QuestionObject], Any] = identity if model is None else into(model)
        payload = FormPayload.model_validate(
            {"title": title, "message": message, "schema": form_schema}
        )
        options = AskOptions.of(
            route=route,
            answerers=answerers,
            ttl_seconds=ttl_seconds,
            callback_url=callback_url,
            metadata=metadata,
            run_ref=run_ref,
        )
        return Question(self, await self._created(payload, options, idempotency_key), parse)

    async def create(
        self,
        payload: AskUserPayload | ApprovalPayload | FormPayload,
        options: AskOptions,
        *,
        idempotency_key: str | None = None,
    ) -> Question[QuestionObject]:
        """Ask the question ``payload`` is (its kind follows from it) with ``options``:
        what ``ask``, ``approve`` and ``form`` do once they have built both."""
        return Question(self, await self._created(payload, options, idempotency_key), identity)

    async def question(self, interrupt_id: str, *, model: type[M] | None = None) -> Question[Any]:
        """A handle on a question asked earlier, e.g. by a process that has since restarted."""
        found = await self.get(interrupt_id)
        return Question(self, found, identity if model is None else into(model))

    async def get(self, interrupt_id: str) -> QuestionObject:
        _, data = await self._http.request(
            "GET", _path(interrupt_id), seconds=self._request_timeout
        )
        return QuestionObject.model_validate(data)

    async def cancel(self, interrupt_id: str, reason: str = "") -> QuestionObject:
        """Cancel an open question; ``Conflict`` (with ``.question``) if it already closed."""
        body = CancelRequest(reason=reason).model_dump(mode="json")
        _, data = await self._http.request(
            "POST", f"{_path(interrupt_id)}/cancel", body=body, seconds=self._request_timeout
        )
        return QuestionObject.model_validate(data)

    async def poll(self, interrupt_id: str, wait: int) -> QuestionObject:
        """One long-poll: the question once closed, or as it is after ``wait`` seconds."""
        _, data = await self._http.request(
            "GET",
            _path(interrupt_id),
            params={"wait": str(wait)},
            seconds=wait + self._request_timeout,
        )
        return QuestionObject.model_validate(data)

    async def _created(
        self,
        payload: AskUserPayload | ApprovalPayload | FormPayload,
        options: AskOptions,
        idempotency_key: str | None,
    ) -> QuestionObject:
        body = _create_body(payload, options, idempotency_key or str(uuid.uuid4()))
        # Only top-level nulls go: a null inside metadata or arguments is data.
        wire = {k: v for k, v in body.model_dump(mode="json").items() if v is not None}
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                _, data = await self._http.request(
                    "POST", "/v1/questions", body=wire, seconds=self._request_timeout
                )
                return QuestionObject.model_validate(data)
            except BridgeError as exc:
                # Safe to repeat: the idempotency key makes a second create the first.
                if not transient(exc) or attempt == _CREATE_ATTEMPTS - 1:
                    raise
                pause = _CREATE_BACKOFF * 2**attempt
                if isinstance(exc, RateLimited) and exc.retry_after is not None:
                    # Sooner would be refused again; a longer wait is the caller's to choose.
                    if exc.retry_after > _CREATE_MAX_PAUSE:
                        raise
                    pause = max(pause, exc.retry_after)
                await asyncio.sleep(pause)
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


def _path(interrupt_id: str) -> str:
    # An id is opaque; quoting keeps a slash in one from naming another path.
    return f"/v1/questions/{quote(interrupt_id, safe='')}"


def _create_body(
    payload: AskUserPayload | ApprovalPayload | FormPayload,
    options: AskOptions,
    idempotency_key: str,
) -> CreateAskUser | CreateApproval | CreateForm:
    """The create request for ``payload``'s kind of question, checked before it is sent."""
    fields = {"idempotency_key": idempotency_key, **options.create_fields()}
    match payload:
        case AskUserPayload():
            return CreateAskUser.model_validate(
                {"kind": "ask_user", "payload": payload.model_dump(mode="json"), **fields}
            )
        case ApprovalPayload():
            dumped = payload.model_dump(mode="json", exclude_none=True)
            return CreateApproval.model_validate({"kind": "approval", "payload": dumped, **fields})
        case FormPayload():
            return CreateForm.model_validate(
                {"kind": "form", "payload": payload.model_dump(mode="json"), **fields}
            )
