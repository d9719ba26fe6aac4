"""API questions with a ``policy``: validated, shown in force, applied (fixed clock)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.api import API_QUESTIONS, ApiSettings, serve_api
from bot.api._objects import question_object
from bot.client.models import CREATE_QUESTION, QuestionObject
from bot.questions.quorum import EXPIRED_REJECTION
from bot.service.outcomes import AlreadyVoted, Counted, Redeemed, Responder, SelfApproval
from bot.stores.ports import Stores
from bot.stores.records import ApiKey
from bot.testing import FixedClock, RecordingSurface
from bot.webhooks import WebhookSettings
from tests.doors._doors import Door
from tests.support import HarnessFactory

KEY = ApiKey("ci", "", ("*",), key_id="key_ci")
ANA = Responder("console:ana", "ana")
BO = Responder("console:bo", "bo")
CY = Responder("console:cy", "cy")
SECRET = "k" * 40


def approval(key: str, policy: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "idempotency_key": key,
        "kind": "approval",
        "payload": {"action": "deploy", "summary": "Deploy to production"},
        "route": {"surface": "console", "conversation": "c1"},
        "answerers": ["console:ana", "console:bo", "console:cy"],
        "ttl_seconds": 60,
        **more,
    }
    if policy is not None:
        body["policy"] = policy
    return body


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    keys = json.dumps([{"name": "ci", "key": SECRET, "routes": ["*"]}])
    async with Door(tmp_path, BOT_API_KEYS=keys) as door:
        yield door


async def _post(door: Door, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"}
    status, text = await door.send(
        "/v1/questions", json.dumps(body).encode(), headers=headers, method="POST"
    )
    return status, json.loads(text)


async def test_a_bad_policy_is_a_400_with_one_sentence(door: Door) -> None:
    cases = [
        ({"quorum": 4}, "quorum is 4 but only 3 distinct answerers"),
        ({"quorum": 1, "surprise": True}, "policy.surprise"),
        ({"remind_after_seconds": 0}, "policy.remind_after_seconds"),
        ({"escalate": [{"after_seconds": 0, "answerers": ["x"]}]}, "after_seconds"),
        ({"on_expire": "approve"}, "policy.on_expire"),
    ]
    ask = {
        "idempotency_key": "ask",
        "kind": "ask_user",
        "payload": {"questions": [{"question": "Which env?", "options": []}]},
        "route": {"surface": "console", "conversation": "c1"},
        "policy": {"quorum": 2},
    }
    status, body = await _post(door, ask)
    assert status == 400 and "approval questions only" in body["error"]["message"]
    for n, (policy, words) in enumerate(cases):
        status, body = await _post(door, approval(f"bad{n}", policy))
        assert status == 400, (policy, body)
        assert body["error"]["code"] == "invalid_request"
        assert words in body["error"]["message"] and body["error"]["message"].endswith(".")
    # The ladder's answerers count toward the quorum; "anyone" lifts the check.
    ladder = {"quorum": 4, "escalate": [{"after_seconds": 5, "answerers": ["console:dee"]}]}
    assert (await _post(door, approval("ladder", ladder)))[0] == 201
    anyone = approval("anyone", {"quorum": 5}, answerers=["anyone"])
    assert (await _post(door, anyone))[0] == 201


async def test_the_object_shows_the_policy_in_force_the_tally_and_the_level(door: Door) -> None:
    status, created = await _post(door, approval("shown", {"quorum": 2}))
    assert status == 201
    assert created["policy"]["quorum"] == 2 and created["policy"]["on_expire"] == "expire"
    assert created["policy"]["max_reminders"] == 0 and created["policy"]["reject"] == "any"
    assert created["tally"] == {"approve": [], "reject": []} and created["level"] == 0
    status, plain = await _post(door, approval("plain"))
    assert plain["policy"]["quorum"] == 1 and plain["policy"]["requester_may_answer"] is True


async def _asked(h: Any, body: dict[str, Any]) -> tuple[Any, str, str]:
    app = web.Application()
    serve_api(app, ApiSettings(), WebhookSettings(), service=h.service)
    created = await app[API_QUESTIONS].create(KEY, CREATE_QUESTION.validate_python(body), body)
    await h.service.wait_idle()
    return app, created.question["id"], h.service.surfaces["console"].last_token


async def _object(stores: Stores, interrupt_id: str) -> dict[str, Any]:
    view = await stores.api.get(interrupt_id)
    assert view is not None
    return QuestionObject.model_validate(question_object(view)).model_dump(mode="json")


async def test_an_api_quorum_counts_distinct_people_and_no_self_approval(
    harness: HarnessFactory, stores: Stores
) -> None:
    h = harness(stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    policy = {"quorum": 2, "requester": "console:ana", "requester_may_answer": False}
    _, interrupt_id, token = await _asked(h, approval("q2", policy))
    row = await stores.ledger.get(interrupt_id)
    assert row is not None
    scope = row.scope

    async def answer(who: Responder, decision: str = "approve") -> Any:
        answer = {"decision": decision, "comment": ""}
        return await h.service.redeem(token, answer, responder=who, scope=scope)

    assert isinstance(await answer(ANA), SelfApproval)
    assert (await _object(stores, interrupt_id))["tally"] == {"approve": [], "reject": []}
    assert isinstance(await answer(BO), Counted)
    assert isinstance(await answer(BO), AlreadyVoted)
    shown = await _object(stores, interrupt_id)
    assert shown["status"] == "open" and shown["tally"] == {"approve": ["console:bo"], "reject": []}
    assert isinstance(await answer(CY), Redeemed)
    done = await _object(stores, interrupt_id)
    assert done["status"] == "answered"
    assert done["answer"]["decision"] == "approve"
    assert done["answer"]["approved_by"] == ["console:bo", "console:cy"]
    assert done["tally"]["approve"] == ["console:bo", "console:cy"]
    # The deciding answer's id; the name of everyone who decided.
    assert done["answered_by"] == {"id": "console:cy", "name": "bo and cy"}


async def test_a_question_without_a_quorum_keeps_no_tally(
    harness: HarnessFactory, stores: Stores
) -> None:
    """A policy of quorum 1 counts nothing: its one answer is answered_by, the tally null."""
    h = harness(stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    policy = {"requester": "console:ana", "requester_may_answer": False}
    _, interrupt_id, token = await _asked(h, approval("q1", policy))
    assert (await _object(stores, interrupt_id))["tally"] is None
    row = await stores.ledger.get(interrupt_id)
    assert row is not None
    answer = {"decision": "approve", "comment": ""}
    assert isinstance(
        await h.service.redeem(token, answer, responder=BO, scope=row.scope), Redeemed
    )
    done = await _object(stores, interrupt_id)
    assert done["status"] == "answered" and done["answered_by"] == {
        "id": "console:bo",
        "name": "bo",
    }
    assert done["tally"] is None
    assert "approved_by" not in done["answer"]


async def test_a_fail_closed_api_question_expires_as_a_rejection(
    harness: HarnessFactory, sqlite_stores: Stores, clock: FixedClock
) -> None:
    h = harness(sqlite_stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    _, interrupt_id, _ = await _asked(h, approval("closed", {"on_expire": "reject"}))
    clock.advance(61)
    assert await h.service.sweep() == 1
    shown = await _object(sqlite_stores, interrupt_id)
    assert shown["status"] == "expired" and shown["answer"] == EXPIRED_REJECTION
    assert shown["answered_by"] is None
    _, other, _ = await _asked(h, approval("open-ended"))
    clock.advance(61)
    assert await h.service.sweep() == 1
    assert (await _object(sqlite_stores, other))["answer"] is None
