"""Text no store keeps (U+0000, a lone surrogate) is a 400 naming the field, alike on every backend.

SQLite would keep a NUL and PostgreSQL cannot, so each door refuses it before
any store: ``/v1`` (body, path id, query), the console's texts, admin commands.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.doors._doors import BACKENDS, Door, Logs, door_on

KEY = "k" * 40
KEYS = json.dumps([{"name": "ci", "key": KEY, "routes": ["console:*"]}])
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
V1 = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
CONSOLE = {"Content-Type": "application/json"}
ROUTE = {"surface": "console", "conversation": "ops"}


def ask(idempotency_key: str = "one", **more: Any) -> dict[str, Any]:
    return {
        "idempotency_key": idempotency_key,
        "kind": "ask_user",
        "payload": {"questions": [{"question": "Which env?", "options": []}]},
        "route": ROUTE,
        **more,
    }


APPROVAL = {
    "idempotency_key": "a",
    "kind": "approval",
    "payload": {"action": "deploy", "summary": "Deploy web", "arguments": {}},
    "route": ROUTE,
    "answerers": ["anyone"],
}
FORM = {
    "idempotency_key": "f",
    "kind": "form",
    "payload": {
        "title": "Who?",
        "message": "Tell us.",
        "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    "route": ROUTE,
}

# (a body, the field the sentence must name); each was a 500 or a 503 on PostgreSQL.
BODIES: list[tuple[dict[str, Any], str]] = [
    (ask("a\x00b"), "idempotency_key"),
    (ask(run_ref="r\x00"), "run_ref"),
    (ask(route={**ROUTE, "conversation": "o\x00ps"}), "route.conversation"),
    (ask(route={**ROUTE, "thread": "t\x00"}), "route.thread"),
    (ask(payload={"questions": [{"question": "Which\x00 env?"}]}), "payload.questions.0.question"),
    (ask(metadata={"ticket": "7\x00"}), "metadata.ticket"),
    (ask(metadata={"tic\x00ket": 7}), "metadata (a key)"),
    (ask(answerers=["U0BOB\x00"]), "answerers.0"),
    (ask(callback_url="https://example.com/\x00"), "callback_url"),
    ({**APPROVAL, "payload": {**APPROVAL["payload"], "summary": "Deploy\x00"}}, "payload.summary"),
    ({**FORM, "payload": {**FORM["payload"], "title": "Who\x00?"}}, "payload.title"),
]


@pytest.fixture(params=BACKENDS)
async def door(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Door]:
    env = {"BOT_API_KEYS": KEYS, "BOT_WEBHOOK_SECRET": SECRET}
    async with door_on(request.param, tmp_path, **env) as opened:
        yield opened


async def _send(
    door: Door, method: str, path: str, body: Any, headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, text = await door.send(path, raw, headers=headers, method=method)
    return status, json.loads(text)


def _v1_sentence(answer: dict[str, Any]) -> str:
    assert answer["error"]["code"] == "invalid_request", answer
    return str(answer["error"]["message"])


async def test_v1_refuses_a_nul_in_any_field_naming_it_and_stores_nothing(door: Door) -> None:
    """Each body field, a path id, a query value and a cancel reason: a 400 naming the field."""
    status, created = await _send(door, "POST", "/v1/questions", ask("open"), V1)
    assert status == 201, created
    path = f"/v1/questions/{created['id']}"
    # A lone surrogate: json.loads takes it, and no store can encode it as UTF-8.
    surrogate = json.dumps(ask("s")).replace("Which env?", "\\ud800").encode()
    cases: list[tuple[str, str, Any, str]] = [
        *(("POST", "/v1/questions", body, field) for body, field in BODIES),
        ("POST", "/v1/questions", surrogate, "payload.questions.0.question"),
        ("GET", "/v1/questions/int_%00", b"", "id"),
        ("POST", "/v1/questions/int_%00/cancel", {}, "id"),
        ("GET", "/v1/questions?run_ref=r%00", b"", "run_ref"),
        ("POST", f"{path}/cancel", {"reason": "no\x00"}, "reason"),
    ]
    before = await door.state()
    with Logs() as logs:
        for method, target, body, field in cases:
            status, answer = await _send(door, method, target, body, V1)
            sentence = _v1_sentence(answer)
            assert status == 400, (target, body, answer)
            assert sentence.startswith(f"{field} contains the character U+"), sentence
            assert sentence.endswith("which the bridge does not store; remove it."), sentence
    logs.assert_clean()
    assert await door.state() == before


async def test_a_callback_host_too_long_for_dns_is_a_400(door: Door) -> None:
    """A 300-character host name was the resolver's IDNA error, a 500."""
    before = await door.state()
    with Logs() as logs:
        url = f"https://{'a' * 300}.com/hooks"
        status, answer = await _send(door, "POST", "/v1/questions", ask(callback_url=url), V1)
    assert status == 400, answer
    assert "not a name DNS can hold" in _v1_sentence(answer)
    logs.assert_clean()
    assert await door.state() == before


async def test_the_console_and_admin_commands_refuse_a_nul_before_the_store(door: Door) -> None:
    """A console message, an admin id and an admin cancel reason: 4xx, nothing changed."""
    status, created = await _send(door, "POST", "/v1/questions", ask("open"), V1)
    assert status == 201, created
    qid = created["id"]
    await door.idle()
    cases: list[tuple[str, str, Any, int, str]] = [
        ("POST", "/api/conversations/ops/messages", {"text": "deploy\x00 web"}, 400, "text"),
        ("GET", "/api/admin/questions/int_%00", b"", 422, "A command"),
        ("POST", "/api/admin/questions/int_%00/resend", {}, 422, "A command"),
        ("POST", f"/api/admin/questions/{qid}/cancel", {"reason": "no\x00"}, 400, "reason"),
    ]
    before = await door.state()
    with Logs() as logs:
        for method, target, body, expected, named in cases:
            status, answer = await _send(door, method, target, body, CONSOLE)
            sentence = answer.get("error") or answer.get("message") or ""
            assert status == expected, (target, answer)
            assert named in sentence and re.search(r"U\+0000", sentence), answer
    logs.assert_clean()
    assert await door.state() == before


async def test_an_answer_with_a_nul_is_kept_alike_on_every_backend(door: Door) -> None:
    """An answer is JSON data, kept escaped: a NUL in it is stored and given back as sent."""
    status, created = await _send(door, "POST", "/v1/questions", ask("open"), V1)
    assert status == 201, created
    await door.idle()
    _, page = await _send(door, "GET", "/api/conversations/ops", b"", CONSOLE)
    token = next(q["token"] for r in page["runs"] for q in r["questions"] if q.get("token"))
    answer = {"token": token, "answer": {"answers": {"Which env?": "sta\x00ging"}}}
    with Logs() as logs:
        status, said = await _send(door, "POST", "/api/answer", answer, CONSOLE)
    assert status == 200, said
    logs.assert_clean()
    _, question = await _send(door, "GET", f"/v1/questions/{created['id']}", b"", V1)
    assert question["answer"] == {"answers": {"Which env?": "sta\x00ging"}}
