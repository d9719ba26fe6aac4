"""The worker's side of an ask: create the question, and long-poll it where no webhook comes.

Both are plain HTTP calls through ``bot.client.Bridge``, so they live in
activities, outside deterministic workflow code. Temporal retries them; the
idempotency key the workflow computed makes a retried create the first one,
and a retried poll only asks again about the same question.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from adapters.temporal._wire import ASK_ACTIVITY, METADATA_KEY, WAIT_ACTIVITY, AskRequest, AskResult
from bot.client import (
    ApprovalPayload,
    AskOptions,
    AskUserPayload,
    Bridge,
    BridgeError,
    FormPayload,
    QuestionObject,
    form_schema_of,
    questions_of,
    transient,
)
from bot.contract.decisions import APPROVE_OR_REJECT

# The bridge holds one long-poll this long at most.
POLL_SECONDS = 30
# The beat's pace for an activity scheduled without a heartbeat timeout.
_DEFAULT_HEARTBEAT_TIMEOUT = timedelta(seconds=30)


class BridgeActivities:
    """The activities ``hitl`` calls; register ``activities`` on the worker.

    ``callback_url`` is where the bridge sends the signed webhook when a
    question closes (the receiver's URL); without it the workflow long-polls
    through ``wait_closed`` instead. ``poll_seconds`` is each long-poll's hold.
    """

    def __init__(
        self, bridge: Bridge, *, callback_url: str | None = None, poll_seconds: int = POLL_SECONDS
    ) -> None:
        if not 1 <= poll_seconds <= POLL_SECONDS:
            raise ValueError(f"poll_seconds must be between 1 and {POLL_SECONDS}")
        self._bridge = bridge
        self._callback_url = callback_url
        self._poll_seconds = poll_seconds

    @property
    def activities(self) -> list[Any]:
        """What to pass as the worker's ``activities=``."""
        return [self.ask, self.wait_closed]

    @activity.defn(name=ASK_ACTIVITY)
    async def ask(self, request: AskRequest) -> AskResult:
        """Create the question (or get the one this key already made)."""
        origin = request.origin
        route: Any = request.routes if request.several else request.routes[0]
        payload = request.payload
        try:
            asked = await self._bridge.create(
                _payload_of(request.kind, payload),
                AskOptions.of(
                    route=route,
                    answerers=request.answerers,
                    ttl_seconds=request.ttl_seconds,
                    callback_url=self._callback_url,
                    metadata={**(request.metadata or {}), METADATA_KEY: origin.as_metadata()},
                    run_ref=request.run_ref,
                    policy=request.policy,
                    # hitl.request_approval returns an approval or raises Rejected: it has
                    # no way to hand a workflow edited arguments or a response, so it never
                    # lets the bridge's BOT_ALLOW offer them.
                    allow=APPROVE_OR_REJECT if request.kind == "approval" else None,
                ),
                idempotency_key=origin.idempotency_key,
            )
        except BridgeError as exc:
            raise _for_temporal(exc) from exc
        return AskResult(
            question=asked.object.model_dump(mode="json"), push=self._callback_url is not None
        )

    @activity.defn(name=WAIT_ACTIVITY)
    async def wait_closed(self, interrupt_id: str) -> dict[str, Any]:
        """Long-poll until the question closes, heartbeating while each poll is held.

        The beat runs beside the poll, so a worker that dies mid-poll is
        noticed within the heartbeat timeout, not after a whole poll slice;
        an outage of the bridge fails the attempt and Temporal retries it.
        """
        beating = asyncio.create_task(_beat(activity.info().heartbeat_timeout))
        try:
            while True:
                try:
                    found: QuestionObject = await self._bridge.poll(
                        interrupt_id, self._poll_seconds
                    )
                except BridgeError as exc:
                    raise _for_temporal(exc) from exc
                if found.closed:
                    return found.model_dump(mode="json")
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating


async def _beat(heartbeat_timeout: timedelta | None) -> None:
    # Three beats per timeout: one lost or late beat does not fail the attempt.
    every = (heartbeat_timeout or _DEFAULT_HEARTBEAT_TIMEOUT).total_seconds() / 3
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)


def _for_temporal(exc: BridgeError) -> BaseException:
    """A client error as Temporal should see it: an outage is retried, a refusal is not.

    The type is the client's class name (``Forbidden``, ``NotFound``...), so a
    workflow can tell them apart from the ``ActivityError``'s cause.
    """
    return ApplicationError(exc.message, type=type(exc).__name__, non_retryable=not transient(exc))


def _payload_of(
    kind: str, payload: dict[str, Any]
) -> AskUserPayload | ApprovalPayload | FormPayload:
    """The payload the workflow sent as JSON, as the kind it asks (checked as the client
    checks what ``ask``, ``approve`` and ``form`` are given)."""
    if kind == "ask_user":
        return questions_of(payload)
    if kind == "approval":
        return ApprovalPayload.model_validate(payload)
    # The workflow's JSON, here being parsed: the form's schema is checked before the model.
    schema = form_schema_of(schema=payload["schema"], model=None)
    return FormPayload.model_validate({**payload, "schema": schema})
