"""A close's webhook has an outbox lane of its own: a retrying edit never holds it back."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.api import API_QUESTIONS, ApiSettings, serve_api
from bot.contract.models import CREATE_QUESTION
from bot.questions.records import ApiKey, Question, RunRecord
from bot.service.answering.outcomes import Redeemed, Responder
from bot.service.delivering.surfaces import DeliveryError
from bot.stores.ports import Stores
from bot.testing import RecordingSurface
from bot.webhooks import WebhookSettings
from tests.support import HarnessFactory
from tests.webhooks.conftest import Receiver

KEY = ApiKey("ci", "", ("*",), key_id="key_ci")


class EditsFailing(RecordingSurface):
    """Posts questions; every edit of a closed one fails as a platform outage would."""

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        raise DeliveryError("the platform is unavailable", permanent=False)


async def test_the_webhook_goes_out_while_the_closed_edit_waits_for_its_retry(
    harness: HarnessFactory, stores: Stores, settings: WebhookSettings, receiver: Receiver
) -> None:
    h = harness(stores, [])
    console = EditsFailing(name="console")
    h.service.add_surface(console)
    app = web.Application()
    stop = serve_api(app, ApiSettings(), settings, service=h.service)
    raw: dict[str, Any] = {
        "idempotency_key": "lane",
        "kind": "approval",
        "payload": {"action": "deploy", "summary": "Deploy web to production"},
        "route": {"surface": "console", "conversation": "c1"},
        "answerers": ["console:ana"],
        "callback_url": receiver.url(),
    }
    created = await app[API_QUESTIONS].create(KEY, CREATE_QUESTION.validate_python(raw), raw)
    await h.service.wait_idle()
    row = await stores.ledger.get(created.question["id"])
    assert row is not None and len(console.questions) == 1

    answer = {"decision": "approve", "comment": ""}
    who = Responder("console:ana", "Ana")
    outcome = await h.service.redeem(console.last_token, answer, responder=who, scope=row.scope)
    assert isinstance(outcome, Redeemed)
    await h.service.wait_idle()

    assert [r.verified["type"] for r in receiver.received] == ["question.answered"]  # type: ignore[index]
    rows = await stores.outbox.of_run(row.run_id)
    assert [(d.kind, d.surface, d.state, d.attempts) for d in rows] == [
        ("publish", "console", "done", 0),
        ("closed", "console", "pending", 1),  # waiting for its retry
        ("webhook", "webhook", "done", 0),
    ]
    await stop()
