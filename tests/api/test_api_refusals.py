"""``/v1`` in process: every refusal is its status and code, and changes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.doors._doors import Door, Logs

KEY = "k" * 40
OTHER_KEY = "o" * 40
KEYS = json.dumps(
    [
        {"name": "ci", "key": KEY, "routes": ["console:*", "teams:*"]},
        {"name": "other", "key": OTHER_KEY, "routes": ["*"]},
    ]
)


def _auth(key: str = KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


def ask(idempotency_key: str = "one", **more: Any) -> dict[str, Any]:
    return {
        "idempotency_key": idempotency_key,
        "kind": "ask_user",
        "payload": {"questions": [{"question": "Which env?", "header": "Env", "options": []}]},
        "route": {"surface": "console", "conversation": "c1"},
        **more,
    }


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    async with Door(tmp_path, BOT_API_KEYS=KEYS) as door:
        yield door


async def call(
    door: Door, method: str, path: str, body: Any = None, *, key: str | None = KEY
) -> tuple[int, dict[str, Any]]:
    raw = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    headers = _auth(key) if key is not None else {"Content-Type": "application/json"}
    status, text = await door.send(path, raw, headers=headers, method=method)
    return status, json.loads(text)


def code(body: dict[str, Any]) -> str:
    return str(body["error"]["code"])


async def test_each_refusal_has_its_status_and_code_and_changes_nothing(door: Door) -> None:
    """Wrong key, route, size, schema, wait, JSON: 4xx with one sentence, no row written."""
    big = ask(metadata={"pad": "x" * 70_000})
    form = {
        "idempotency_key": "f",
        "kind": "form",
        "payload": {
            "title": "T",
            "message": "M",
            "schema": {"type": "object", "properties": {"deep": {"type": "object"}}},
        },
        "route": {"surface": "console", "conversation": "c1"},
    }
    cases: list[tuple[str, str, Any, str | None, int, str]] = [
        ("POST", "/v1/questions", ask(), None, 401, "unauthorized"),
        ("POST", "/v1/questions", ask(), "x" * 40, 401, "unauthorized"),
        (
            "POST",
            "/v1/questions",
            ask(route={"surface": "slack", "conversation": "C1"}),
            KEY,
            403,
            "forbidden",
        ),
        ("POST", "/v1/questions", big, KEY, 413, "payload_too_large"),
        ("POST", "/v1/questions", form, KEY, 400, "invalid_request"),
        ("POST", "/v1/questions", b"[1, 2]", KEY, 400, "invalid_request"),
        ("POST", "/v1/questions", b"{not json", KEY, 400, "invalid_request"),
        ("POST", "/v1/questions", ask(ttl_seconds=5), KEY, 400, "invalid_request"),
        ("POST", "/v1/questions", ask(kind="poll"), KEY, 400, "invalid_request"),
        ("GET", "/v1/questions/int_nope?wait=31", None, KEY, 400, "invalid_request"),
        ("GET", "/v1/questions/int_nope", None, KEY, 404, "not_found"),
        ("GET", "/v1/questions?limit=0", None, KEY, 400, "invalid_request"),
        ("GET", "/v1/questions?status=done", None, KEY, 400, "invalid_request"),
        ("GET", "/v1/questions?cursor=zzz", None, KEY, 400, "invalid_request"),
        ("GET", "/v1/nothing-here", None, KEY, 404, "not_found"),
        (
            "POST",
            "/v1/questions",
            ask(route={"surface": "teams", "conversation": "19:never-seen"}),
            KEY,
            422,
            "unprocessable",
        ),
        (
            "POST",
            "/v1/questions",
            ask(callback_url="http://127.0.0.1:9/hook"),
            KEY,
            400,
            "invalid_request",
        ),
    ]
    before = await door.state()
    with Logs() as logs:
        for method, path, body, key, status, expected in cases:
            got, answer = await call(door, method, path, body, key=key)
            assert (got, code(answer)) == (status, expected), (path, body, answer)
            message = answer["error"]["message"]
            assert message.endswith(".") and "\n" not in message, message
    logs.assert_clean()
    assert await door.state() == before
    # The schema refusal names the property.
    _, answer = await call(door, "POST", "/v1/questions", form)
    assert "deep" in answer["error"]["message"]


async def test_another_keys_question_is_not_found(door: Door) -> None:
    """A key sees only its own questions: another's id is a 404, not a 403."""
    status, created = await call(door, "POST", "/v1/questions", ask())
    assert status == 201, created
    path = f"/v1/questions/{created['id']}"
    assert (await call(door, "GET", path, key=OTHER_KEY))[0] == 404
    assert (await call(door, "POST", f"{path}/cancel", {}, key=OTHER_KEY))[0] == 404
    page = (await call(door, "GET", "/v1/questions", key=OTHER_KEY))[1]
    assert page == {"data": [], "next_cursor": None}


async def test_the_same_idempotency_key_with_another_body_is_a_conflict(door: Door) -> None:
    """Same key and body: the same question (200); another body: 409, nothing new."""
    status, first = await call(door, "POST", "/v1/questions", ask())
    assert status == 201
    status, again = await call(door, "POST", "/v1/questions", ask())
    assert (status, again["id"]) == (200, first["id"])
    status, other = await call(door, "POST", "/v1/questions", ask(run_ref="changed"))
    assert (status, code(other)) == (409, "conflict")
    # Keys are per API key: the other key's "one" is its own question.
    status, theirs = await call(door, "POST", "/v1/questions", ask(), key=OTHER_KEY)
    assert status == 201 and theirs["id"] != first["id"]


async def test_cancel_closes_once_and_then_conflicts_with_the_object(door: Door) -> None:
    """Cancel answers the cancelled object; a second cancel is 409 carrying it."""
    _, created = await call(door, "POST", "/v1/questions", ask())
    path = f"/v1/questions/{created['id']}/cancel"
    status, cancelled = await call(door, "POST", path, {"reason": "not needed"})
    assert status == 200, cancelled
    assert cancelled["status"] == "cancelled"
    assert cancelled["cancel_reason"] == "not needed"
    assert cancelled["closed_at"] is not None
    status, again = await call(door, "POST", path, {})
    assert (status, code(again)) == (409, "conflict")
    assert again["question"]["status"] == "cancelled"


async def test_the_list_pages_newest_first_and_filters(door: Door) -> None:
    """limit and cursor walk every question once, newest first; status and run_ref filter."""
    ids = []
    for n in range(5):
        _, created = await call(door, "POST", "/v1/questions", ask(f"k{n}", run_ref=f"r{n % 2}"))
        ids.append(created["id"])
    await call(door, "POST", f"/v1/questions/{ids[0]}/cancel", {})
    seen: list[str] = []
    cursor = ""
    while True:
        query = f"?limit=2&cursor={cursor}" if cursor else "?limit=2"
        status, page = await call(door, "GET", f"/v1/questions{query}")
        assert status == 200, page
        seen += [q["id"] for q in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]
    _, open_only = await call(door, "GET", "/v1/questions?status=open")
    assert [q["id"] for q in open_only["data"]] == ids[:0:-1]
    _, grouped = await call(door, "GET", "/v1/questions?run_ref=r1")
    assert [q["id"] for q in grouped["data"]] == [ids[3], ids[1]]


async def test_the_openapi_document_needs_no_key_and_names_every_path(door: Door) -> None:
    """/v1/openapi.json is OpenAPI 3.1, generated from the models."""
    status, text = await door.send("/v1/openapi.json", method="GET")
    document = json.loads(text)
    assert status == 200
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {
        "/v1/questions",
        "/v1/questions/{id}",
        "/v1/questions/{id}/cancel",
    }
    assert "CreateForm" in document["components"]["schemas"]


async def test_a_form_question_is_asked_with_its_schema(door: Door) -> None:
    """kind=form is accepted whatever the agent registered, and shows its schema back."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer"}},
        "required": ["name"],
    }
    body = {
        "idempotency_key": "form-1",
        "kind": "form",
        "payload": {"title": "Who?", "message": "Tell us.", "schema": schema},
        "route": {"surface": "console", "conversation": "c1"},
    }
    status, created = await call(door, "POST", "/v1/questions", body)
    assert status == 201, created
    assert created["payload"]["schema"] == schema
    assert created["answerers"] == ["anyone"]


async def test_a_private_callback_or_big_metadata_is_refused_when_webhooks_are_on(
    tmp_path: Path,
) -> None:
    """With a webhook secret: loopback, private and metadata over 4,096 bytes are each a 400."""
    secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    async with Door(tmp_path, BOT_API_KEYS=KEYS, BOT_WEBHOOK_SECRET=secret) as door:
        before = await door.state()
        for url in ("http://127.0.0.1:9/hook", "http://10.0.0.7/hook", "http://[::1]/hook"):
            status, answer = await call(door, "POST", "/v1/questions", ask(callback_url=url))
            assert (status, code(answer)) == (400, "invalid_request"), (url, answer)
            assert (
                "private" in answer["error"]["message"] or "loopback" in answer["error"]["message"]
            )
        big = ask(metadata={"note": "x" * 4100})
        status, answer = await call(door, "POST", "/v1/questions", big)
        assert (status, code(answer)) == (400, "invalid_request")
        assert "metadata" in answer["error"]["message"]
        assert await door.state() == before
