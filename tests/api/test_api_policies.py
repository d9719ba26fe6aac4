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
from bot.contract.models import CREATE_QUESTION, QuestionObject
from bot.questions.quorum import EXPIRED_REJECTION
from bot.questions.records import ApiKey
from bot.service.answering.outcomes import AlreadyVoted, Counted, Redeemed, Responder, SelfApproval
from bot.stores.ports import Stores
from bot.testing import FixedClock, RecordingSurface
from bot.webhooks import WebhookSettings
from tests.doors._doors import BACKENDS, Door, Logs, door_on
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


ALICE_SLACK = Responder("slack:T0TEST:U0ALICE", "alice")
BOB_SLACK = Responder("slack:T0TEST:U0BOB", "bob")
# The spellings of U0ALICE a request could give: the bridge takes each as her one id, or refuses it.
TAKEN = [
    " U0ALICE",
    "U0ALICE ",
    "slack:t0test:u0alice",
    "SLACK:T0TEST:U0ALICE",
    "slack:T0TEST:u0alice",
]
REFUSED = ["u0alice", "U0ALICE\u200b", "<@U0ALICE>", "\uff350ALICE"]


def self_approval(key: str, requester: str) -> dict[str, Any]:
    policy = {"requester": requester, "requester_may_answer": False}
    return approval(key, policy, answerers=["U0ALICE", "U0BOB"])


@pytest.mark.parametrize("requester", TAKEN)
async def test_no_spelling_of_the_requester_lets_them_approve(
    harness: HarnessFactory, stores: Stores, requester: str
) -> None:
    """The requester, however the policy spells them, is refused; the other answerer decides."""
    h = harness(stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    _, interrupt_id, token = await _asked(h, self_approval("self", requester))
    row = await stores.ledger.get(interrupt_id)
    assert row is not None
    answer = {"decision": "approve", "comment": ""}
    refused = await h.service.redeem(token, answer, responder=ALICE_SLACK, scope=row.scope)
    assert isinstance(refused, SelfApproval)
    assert (await _object(stores, interrupt_id))["status"] == "open"
    taken = await h.service.redeem(token, answer, responder=BOB_SLACK, scope=row.scope)
    assert isinstance(taken, Redeemed)
    assert (await _object(stores, interrupt_id))["policy"]["requester"] in (
        "U0ALICE",
        ALICE_SLACK.id,
    )


async def test_an_id_the_bridge_cannot_canonicalize_is_a_400_saying_how_to_write_it(
    door: Door,
) -> None:
    """Lowercase, invisible, mention and look-alike spellings are refused when asked."""
    for n, spelt in enumerate(REFUSED):
        for body in (self_approval(f"r{n}", spelt), approval(f"a{n}", answerers=[spelt, "U0BOB"])):
            status, refused = await _post(door, body)
            assert status == 400, (spelt, refused)
            message = refused["error"]["message"]
            assert "write" in message and message.endswith("."), message


# Every spelling of Ana's inbox that is not her one plain address, and addresses no mail
# can reach: each would have been another person (or several inboxes) before.
EMAILS_REFUSED = [
    "<ana@example.com>",
    '"ana"@example.com',
    "ana(x)@example.com",
    "mailto:ana@example.com",
    "ana@example.com\\",
    "ana@example.com,eve@evil.example",
    "ana@example.com.",
    "ana@example..com",
]
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
AAD = "6b0f1e9a-4c2d-4e1f-8a3b-5d6e7f809a1b"
TEAMS_REFUSED = [
    f"teams:{{{TENANT}}}:{AAD}",
    f"teams:{TENANT}:{AAD.replace('-', '')}",
    f"teams:{TENANT}:{AAD}:x",
    f"teams:contoso:{AAD}",
]


def _refusals(spelt: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    """Each door of a ``/v1`` create that takes a person, given ``spelt``: (field, body)."""
    ladder = {"escalate": [{"after_seconds": 5, "answerers": [spelt]}]}
    return [
        ("answerers.0", approval(f"a{n}", answerers=[spelt, "console:bo"])),
        ("policy.requester", approval(f"r{n}", {"requester": spelt})),
        ("policy.escalate.0.answerers.0", approval(f"e{n}", ladder)),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_email_or_teams_id_with_no_one_spelling_is_a_400_naming_the_field(
    tmp_path: Path, backend: str
) -> None:
    """Answerers, requester and escalation refuse each such id saying how to write it; an
    email route refuses all but one plain address; nothing is stored, nothing logged."""
    keys = json.dumps([{"name": "ci", "key": SECRET, "routes": ["*"]}])
    async with door_on(backend, tmp_path, BOT_API_KEYS=keys) as door:
        before = await door.state()
        with Logs() as logs:
            for n, spelt in enumerate([*(f"email:{a}" for a in EMAILS_REFUSED), *TEAMS_REFUSED]):
                for field, body in _refusals(spelt, n):
                    status, refused = await _post(door, body)
                    assert status == 400, (spelt, field, refused)
                    message = refused["error"]["message"]
                    assert message.startswith(f"{field}: "), message
                    how = "write email: and one plain address" if "email" in spelt else "GUIDs"
                    assert how in message and message.endswith("."), message
            for n, address in enumerate(EMAILS_REFUSED):
                body = approval(f"m{n}", route={"surface": "email", "conversation": address})
                status, refused = await _post(door, body)
                assert status == 400, (address, refused)
                message = refused["error"]["message"]
                assert message.startswith("route: the email route"), message
                assert "a route of its own, such as ana@example.com" in message
        logs.assert_clean()
        assert await door.state() == before


async def test_answerers_naming_one_person_twice_are_a_400(door: Door) -> None:
    """Duplicates after canonicalizing are refused, so a quorum cannot need one person twice."""
    twice = [
        ["U0ALICE", "slack:T0TEST:U0ALICE"],
        ["U0ALICE", " U0ALICE"],
        ["slack:t0test:u0alice", "SLACK:T0TEST:U0ALICE"],
        ["console:ana", " console:ana "],
        ["slack:T0TEST:U0ALICE", "slack:T0OTHER:U0ALICE"],
        ["email:Ana@Example.com", "email:ana@example.com"],
    ]
    for n, answerers in enumerate(twice):
        status, body = await _post(door, approval(f"t{n}", {"quorum": 2}, answerers=answerers))
        assert status == 400, (answerers, body)
        assert "more than once" in body["error"]["message"]
    ladder = {"quorum": 3, "escalate": [{"after_seconds": 5, "answerers": ["slack:T1:U0ALICE"]}]}
    status, body = await _post(door, approval("ladder2", ladder, answerers=["U0ALICE", "U0BOB"]))
    assert status == 400 and "only 2 distinct answerers" in body["error"]["message"]


async def test_a_spaced_answerer_is_taken_as_the_id_and_can_answer(
    harness: HarnessFactory, stores: Stores
) -> None:
    """``" U0BOB"`` is stored as U0BOB, shown so, and U0BOB's click answers."""
    h = harness(stores, [])
    h.service.add_surface(RecordingSurface(name="console"))
    body = approval("spaced", answerers=[" U0BOB", "console:ana\t"])
    _, interrupt_id, token = await _asked(h, body)
    assert (await _object(stores, interrupt_id))["answerers"] == ["U0BOB", "console:ana"]
    row = await stores.ledger.get(interrupt_id)
    assert row is not None
    answer = {"decision": "approve", "comment": ""}
    assert isinstance(
        await h.service.redeem(token, answer, responder=BOB_SLACK, scope=row.scope), Redeemed
    )
