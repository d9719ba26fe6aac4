"""Ask a person from workflow code: ``ask_human``, ``request_approval``, ``form``.

Each call is deterministic workflow code. It takes the next position in the
run's count of asks (the same on every replay), has an activity create the
question with an idempotency key from the workflow id, the run id and that
position (a retried activity or a replayed workflow gets the question it
already made), then waits with ``workflow.wait_condition`` until the close
is in the workflow's state, the question's expiry being the wait's timeout:
a durable timer, so a workflow whose bridge is gone still learns on time
that nobody answered.

The close comes pushed, as the update ``CLOSE_UPDATE`` that the receiver
makes of the bridge's webhook, or, when the worker has no callback URL,
pulled by a long-polling activity. Either way it lands in the same state,
keyed by question id: the first close of a question counts, a repeat is
reported ``duplicate`` and changes nothing, and a close that arrives before
the workflow waits for it is there when it looks. The update takes only the
close of a question this run asked (its idempotency key, and once known its
id): any key holder can name a workflow in a question's metadata.

How a question closed without the answer asked for is raised as the Python
client raises it: ``Expired``, ``Cancelled``, ``Rejected`` (``bot.client``).
Uncaught, each fails the workflow only if the worker (or the workflow) lists
``bot.client.Outcome`` among its failure exception types; otherwise Temporal
retries the workflow task, as it does for any unexpected exception.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, overload

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel, ValidationError

    from adapters.temporal._wire import (
        ACCEPTED,
        ASK_ACTIVITY,
        CLOSE_UPDATE,
        DUPLICATE,
        WAIT_ACTIVITY,
        AskRequest,
        AskResult,
        Origin,
    )
    from bot.client import (
        ApprovalAnswer,
        AskOptions,
        AskUserAnswer,
        Policy,
        QuestionObject,
        QuestionsLike,
        Rejected,
        RoutesLike,
        WebhookEvent,
        form_schema_of,
        outcome_error,
        questions_of,
    )
    from bot.contract.answers import FormValues

M = TypeVar("M", bound=BaseModel)

# Creating a question is one quick request; a bridge that is down is retried
# by Temporal (the key makes that safe) for as long as it takes.
ASK_TIMEOUT = timedelta(seconds=60)
RETRY = RetryPolicy(maximum_interval=timedelta(seconds=10))
# A worker that dies while long-polling is noticed within this, and the poll
# is retried on another worker.
HEARTBEAT_TIMEOUT = timedelta(seconds=10)
# The poll outlives the question by this much at most: past its expiry the
# workflow's own timer has decided, and cancels the poll.
_POLL_GRACE = timedelta(minutes=5)
# The attribute on the workflow instance that holds its asks' state.
_STATE = "_bridge_hitl_state"


@dataclass
class _State:
    """One workflow run's asks and every close that has arrived for them."""

    # Each ask's idempotency key, in order, to the id of the question it made once the ask
    # activity has said (None until then).
    asks: dict[str, str | None] = field(default_factory=dict)
    closed: dict[str, QuestionObject] = field(default_factory=dict)

    def next_origin(self) -> Origin:
        """The next ask's origin: this run, at the position after the asks so far."""
        info = workflow.info()
        origin = Origin(info.namespace, info.workflow_id, info.run_id, len(self.asks))
        self.asks[origin.idempotency_key] = None
        return origin

    def made(self, origin: Origin, question: QuestionObject) -> None:
        self.asks[origin.idempotency_key] = question.id

    def check(self, question: QuestionObject) -> None:
        """Refuse a close that is not of a question this run asked.

        Anyone with a key of the bridge can ask a question whose metadata names
        this workflow, and the bridge signs its close like any other. Only this
        run's asks carry its idempotency keys, and once the ask activity has
        said which question a key made, only that question's close counts: a
        key holder who copies the key gets a question of another id.
        """
        if not question.closed:
            raise ValueError(f"Question {question.id} is still open.")
        if question.idempotency_key not in self.asks:
            raise ValueError(f"Question {question.id} is not one this workflow run asked.")
        made = self.asks[question.idempotency_key]
        if made is not None and made != question.id:
            raise ValueError(f"Question {question.id} is not the one this workflow run asked.")

    def take(self, question: QuestionObject) -> str:
        if question.id in self.closed:
            return DUPLICATE
        self.closed[question.id] = question
        return ACCEPTED


def _event(event: dict[str, Any]) -> QuestionObject:
    """The question an update's argument closes; ValueError if it is no bridge event."""
    try:
        return WebhookEvent.model_validate(event).data
    except ValidationError:
        raise ValueError("The update is not a question event from the bridge.") from None


def _state() -> _State:
    """This run's state, made (and the close update's handler set) on the first ask.

    Set before the first question exists, so no close can arrive for which
    the workflow has no handler, on the first run or on any replay.
    """
    instance = workflow.instance()
    state = getattr(instance, _STATE, None)
    if isinstance(state, _State):
        return state
    made = _State()
    setattr(instance, _STATE, made)

    def on_close(event: dict[str, Any]) -> str:
        return made.take(WebhookEvent.model_validate(event).data)

    def validate_close(event: dict[str, Any]) -> None:
        # A refusal here is never written to the workflow's history.
        made.check(_event(event))

    workflow.set_update_handler(CLOSE_UPDATE, on_close, validator=validate_close)
    return made


def _expiry(question: QuestionObject) -> datetime:
    return datetime.fromisoformat(question.expires_at.replace("Z", "+00:00"))


async def _answered(kind: str, payload: dict[str, Any], options: AskOptions) -> QuestionObject:
    """Ask, then wait durably for the close: the answered question, or how it closed
    without an answer raised (``Expired`` also when the timer saw the expiry first)."""
    state = _state()
    origin = state.next_origin()
    request = AskRequest(
        kind=kind,
        payload=payload,
        routes=[one.model_dump(mode="json", exclude_none=True) for one in options.routes],
        several=isinstance(options.route, tuple),
        origin=origin,
        answerers=None if options.answerers is None else list(options.answerers),
        ttl_seconds=options.ttl_seconds,
        metadata=None if options.metadata is None else dict(options.metadata),
        run_ref=options.run_ref,
        policy=None if options.policy is None else options.policy.model_dump(mode="json"),
    )
    asked: AskResult = await workflow.execute_activity(
        ASK_ACTIVITY,
        request,
        result_type=AskResult,
        start_to_close_timeout=ASK_TIMEOUT,
        retry_policy=RETRY,
        summary=f"ask the bridge ({kind})",
    )
    question = QuestionObject.model_validate(asked.question)
    state.made(origin, question)
    if question.closed:  # closed before a retried create read it back
        state.take(question)
    remaining = _expiry(question) - workflow.now()
    poll: workflow.ActivityHandle[Any] | None = None
    if not asked.push and question.id not in state.closed:
        poll = workflow.start_activity(
            WAIT_ACTIVITY,
            question.id,
            start_to_close_timeout=max(remaining, timedelta(0)) + _POLL_GRACE,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=RETRY,
            summary="long-poll the bridge",
        )
    try:
        if question.id not in state.closed and remaining > timedelta(0):
            await workflow.wait_condition(
                lambda: question.id in state.closed or (poll is not None and poll.done()),
                timeout=remaining,
                timeout_summary=f"question {question.id} expires",
            )
    except TimeoutError:
        pass
    except BaseException:
        if poll is not None:
            poll.cancel()
        raise
    if poll is not None and question.id not in state.closed:
        if poll.done():
            # A refusal from the bridge (the question gone, the key revoked) raises here.
            state.take(QuestionObject.model_validate(poll.result()))
        else:
            poll.cancel()  # the timer decided first
    closed = state.closed.get(question.id)
    if closed is None:  # the timer decided first
        closed = question.model_copy(update={"status": "expired"})
    if closed.status != "answered":
        raise outcome_error(closed)
    return closed


async def ask_human(
    questions: QuestionsLike,
    *,
    route: RoutesLike,
    answerers: Sequence[str] | None = None,
    ttl_seconds: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    run_ref: str | None = None,
) -> AskUserAnswer:
    """Ask one to five questions (a string is one free-text question); each one's answer.

    Raises ``Expired`` or ``Cancelled`` when the question closed unanswered.
    """
    asked = questions_of(questions).model_dump(mode="json", exclude_none=True)
    options = AskOptions.of(
        route=route,
        answerers=answerers,
        ttl_seconds=ttl_seconds,
        metadata=metadata,
        run_ref=run_ref,
    )
    answered = await _answered("ask_user", asked, options)
    # The caller gets the client's public model of the wire's answer, read from its JSON.
    return AskUserAnswer.model_validate(answered.answer or {})


async def request_approval(
    action: str,
    summary: str,
    *,
    arguments: Mapping[str, Any],
    route: RoutesLike,
    answerers: Sequence[str],
    risk: str = "medium",
    ttl_seconds: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    run_ref: str | None = None,
    policy: Policy | Mapping[str, Any] | None = None,
) -> ApprovalAnswer:
    """Ask ``answerers`` to approve ``action``; the approval, once given.

    Raises ``Rejected`` (with the approver's ``comment``) on a rejection, and
    ``Expired`` or ``Cancelled`` when nobody decided: do the action only when
    this returns.
    """
    asked = {"action": action, "summary": summary, "arguments": dict(arguments), "risk": risk}
    options = AskOptions.of(
        route=route,
        answerers=answerers,
        ttl_seconds=ttl_seconds,
        metadata=metadata,
        run_ref=run_ref,
        policy=policy,
    )
    answered = await _answered("approval", asked, options)
    # The caller gets the client's public model of the wire's answer, read from its JSON.
    answer = ApprovalAnswer.model_validate(answered.answer or {})
    if answer.decision != "approve":
        raise Rejected(answer.comment, question=answered)
    return answer


@overload
async def form(
    title: str,
    message: str,
    *,
    model: type[M],
    route: RoutesLike,
    answerers: Sequence[str] | None = ...,
    ttl_seconds: int | None = ...,
    metadata: Mapping[str, Any] | None = ...,
    run_ref: str | None = ...,
) -> M: ...


@overload
async def form(
    title: str,
    message: str,
    *,
    schema: Mapping[str, Any],
    route: RoutesLike,
    answerers: Sequence[str] | None = ...,
    ttl_seconds: int | None = ...,
    metadata: Mapping[str, Any] | None = ...,
    run_ref: str | None = ...,
) -> dict[str, Any]: ...


async def form(
    title: str,
    message: str,
    *,
    schema: Mapping[str, Any] | None = None,
    model: type[BaseModel] | None = None,
    route: RoutesLike,
    answerers: Sequence[str] | None = None,
    ttl_seconds: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    run_ref: str | None = None,
) -> Any:
    """A form from a pydantic ``model`` (its answer as a validated model) or a JSON ``schema``
    (the answer as a dict); raises ``Expired`` or ``Cancelled`` when unanswered.

    A schema outside the form subset is refused here, before anything is asked.
    """
    form_schema = form_schema_of(schema=schema, model=model)
    options = AskOptions.of(
        route=route,
        answerers=answerers,
        ttl_seconds=ttl_seconds,
        metadata=metadata,
        run_ref=run_ref,
    )
    asked = {"title": title, "message": message, "schema": form_schema}
    answered = await _answered("form", asked, options)
    typed = answered.typed_answer
    answer = dict(typed.values) if isinstance(typed, FormValues) else {}
    return answer if model is None else model.model_validate(answer)
