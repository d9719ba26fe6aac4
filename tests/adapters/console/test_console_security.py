"""The console's password, same-site POSTs and response headers."""

from __future__ import annotations

import pytest
from aiohttp import encode_basic_auth

from tests.adapters.console.console_support import (
    CID,
    WHICH_ENV,
    Console,
    ConsoleFactory,
)

PASSWORD = "correct horse battery"
ROUTES = [
    "/",
    "/static/app.js",
    "/static/style.css",
    "/api/conversations",
    f"/api/conversations/{CID}",
]


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": encode_basic_auth(user, password)}


@pytest.fixture
async def locked(make_console: ConsoleFactory) -> Console:
    return await make_console(password=PASSWORD)


@pytest.mark.parametrize("path", ROUTES)
async def test_password_is_required_on_every_route(locked: Console, path: str) -> None:
    """Without credentials each console route is 401 with a Basic challenge."""
    response = await locked.client.get(path)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"].startswith("Basic ")
    assert (await response.json())["ok"] is False


@pytest.mark.parametrize("path", ROUTES)
async def test_right_password_any_user_is_let_in(locked: Console, path: str) -> None:
    """Any user name with the password gets the route."""
    response = await locked.client.get(path, headers=basic("whoever", PASSWORD))
    assert response.status == 200


async def test_wrong_password_is_401(locked: Console) -> None:
    """A wrong password is refused like a missing one."""
    response = await locked.client.get("/api/conversations", headers=basic("a", "nope"))
    assert response.status == 401
    garbled = await locked.client.get(
        "/api/conversations", headers={"Authorization": "Basic !!!not-base64"}
    )
    assert garbled.status == 401


async def test_event_stream_needs_the_password(locked: Console) -> None:
    """The SSE endpoint is 401 without credentials and streams with them."""
    bare = await locked.client.get("/api/events")
    assert bare.status == 401
    assert locked.surface.hub.subscribers == 0
    async with locked.client.get("/api/events", headers=basic("u", PASSWORD)) as stream:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")


async def test_posts_need_the_password_and_start_nothing(locked: Console) -> None:
    """An unauthenticated message is 401 and no run is stored."""
    response = await locked.client.post(f"/api/conversations/{CID}/messages", json={"text": "hi"})
    assert response.status == 401
    assert await locked.service.stores.runs.recent() == []


async def test_cross_origin_post_is_403_and_starts_nothing(console: Console) -> None:
    """A POST whose Origin is another site is refused before anything starts."""
    response = await console.client.post(
        f"/api/conversations/{CID}/messages",
        json={"text": "deploy web"},
        headers={"Origin": "http://evil.example"},
    )
    assert response.status == 403
    assert "another site" in (await response.json())["error"]
    null_origin = await console.client.post(
        f"/api/conversations/{CID}/messages",
        json={"text": "deploy web"},
        headers={"Origin": "null"},
    )
    assert null_origin.status == 403
    same_host_other_port = str(console.client.make_url("/")).replace(
        f":{console.client.port}", f":{console.client.port + 1}"
    )
    other_port = await console.client.post(
        f"/api/conversations/{CID}/messages",
        json={"text": "deploy web"},
        headers={"Origin": same_host_other_port.rstrip("/")},
    )
    assert other_port.status == 403
    assert await console.service.stores.runs.recent() == []


@pytest.mark.parametrize(
    "headers",
    [{"Content-Type": "text/plain"}, {"Content-Type": "application/x-www-form-urlencoded"}, {}],
)
async def test_non_json_post_is_403_and_starts_nothing(
    console: Console, headers: dict[str, str]
) -> None:
    """What an HTML form could send cross-site (no JSON content type) is refused."""
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", data=b'{"text": "deploy web"}', headers=headers
    )
    assert response.status == 403
    assert "application/json" in (await response.json())["error"]
    assert await console.service.stores.runs.recent() == []


async def test_cross_origin_answer_is_403_and_spends_nothing(console: Console) -> None:
    """A cross-site answer leaves the question open with a working token."""
    await console.send("deploy web")
    asked = await console.open_question()
    forged = await console.client.post(
        "/api/answer",
        json={"token": asked["token"], "answer": {"answers": {WHICH_ENV: "production"}}},
        headers={"Origin": "https://evil.example"},
    )
    assert forged.status == 403
    assert (await console.open_question())["interrupt_id"] == asked["interrupt_id"]
    real = await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    assert real.status == 200


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/style.css"])
async def test_page_and_assets_carry_the_csp(console: Console, path: str) -> None:
    """The page and its files are served with a strict CSP and nosniff."""
    response = await console.client.get(path)
    assert response.status == 200
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_page_has_no_inline_script(console: Console) -> None:
    """The page loads its script from /static, so the CSP needs no inline allowance."""
    page = await (await console.client.get("/")).text()
    assert '<script src="/static/app.js" defer></script>' in page
    assert page.count("<script") == 1
    script = await console.client.get("/static/app.js")
    assert script.content_type == "text/javascript"
    assert "EventSource" in await script.text()


async def test_api_responses_are_not_stored(console: Console) -> None:
    """API answers (which carry tokens) say Cache-Control: no-store, errors too."""
    listed = await console.client.get("/api/conversations")
    assert listed.headers["Cache-Control"] == "no-store"
    refused = await console.client.post("/api/answer", json={})
    assert refused.headers["Cache-Control"] == "no-store"
    assert refused.headers["X-Content-Type-Options"] == "nosniff"


async def test_unknown_static_file_is_404(console: Console) -> None:
    """Only the page's own files are served from /static."""
    response = await console.client.get("/static/secrets.txt")
    assert response.status == 404
    assert (await response.json())["ok"] is False
