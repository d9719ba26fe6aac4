"""The webhook a question's close owes, sent for the deliverer
(``bot.service.delivering.delivery``).

The event's id is the question's, so every attempt (and a redelivery by
another replica) carries the same ``webhook-id`` and a receiver can drop a
repeat. The object is read when sending, so it shows the close's outcome.
"""

from __future__ import annotations

from bot import tracing
from bot.api._objects import checked_object
from bot.questions.records import OutboxRow, QuestionStatus
from bot.service.delivering.surfaces import DeliveryError
from bot.stores.ports import ApiRecords
from bot.webhooks import EventType, Refused, Retry, Sent, WebhookSender, retry_delay

EVENTS: dict[QuestionStatus, EventType] = {
    QuestionStatus.ANSWERED: "question.answered",
    QuestionStatus.EXPIRED: "question.expired",
    QuestionStatus.CANCELLED: "question.cancelled",
}


class ApiWebhooks:
    """``Webhooks`` for the deliverer: the API question's event, signed, to its callback."""

    def __init__(self, sender: WebhookSender, records: ApiRecords) -> None:
        self._sender = sender
        self._records = records

    async def deliver(self, delivery: OutboxRow) -> None:
        view = await self._records.get(delivery.interrupt_id)
        if view is None or view.request.callback_url is None:
            return  # nothing to call back
        question = view.question
        kind = EVENTS.get(question.status)
        if kind is None:
            return  # not closed: no close to announce
        attributes = {**tracing.ids(question), "hitl.webhook.attempt": delivery.attempts + 1}
        with tracing.step("webhook.delivered", question.trace_parent, attributes) as span:
            result = await self._sender.post(
                view.request.callback_url,
                message_id=f"msg_{question.interrupt_id}",
                kind=kind,
                data=checked_object(view),
                at=question.closed_at or question.issued_at,
                # The receiver's handler (an agent resuming) continues the question's trace.
                headers=tracing.outgoing(),
            )
            match result:
                case Sent():
                    return
                case Retry(reason=reason):
                    tracing.failed(span, "retry")
                    raise DeliveryError(reason)
                case Refused(reason=reason):
                    tracing.failed(span, "refused")
                    raise DeliveryError(reason, permanent=True)

    def retry_delay(self, attempt: int) -> float | None:
        return retry_delay(attempt)

    async def close(self) -> None:
        await self._sender.close()
