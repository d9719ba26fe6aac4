"""The console's sign-in, same-site POSTs, the event-stream cap and response headers."""

from __future__ import annotations

import pytest
from aiohttp import encode_basic_auth

from adapters.console import ConsoleLimits
from tests import waiting
from tests.adapters.console.console_support import (
    CID,
    WHICH_ENV,
    Console,
    ConsoleFactory,
)

PASSWORD = "correct horse battery"
BO_PASSWORD = "bo's own long password"
USERS = {"ana": PASSWORD, "bo": BO_PASSWORD}
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
    return await make_console(users=USERS)


@pytest.mark.parametrize("path", ROUTES)
async def test_sign_in_is_required_on_every_route(locked: Console, path: str) -> None:
    """Without credentials each console route is 401 with a Basic challenge."""
    response = await locked.client.get(path)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"].startswith("Basic ")
    assert (await response.json())["ok"] is False


@pytest.mark.parametrize("path", ROUTES)
async def test_a_person_with_their_own_password_is_let_in(locked: Console, path: str) -> None:
    """A configured user with their own password gets the route."""
    response = await locked.client.get(path, headers=basic("ana", PASSWORD))
    assert response.status == 200


async def test_wrong_password_or_someone_elses_is_401(locked: Console) -> None:
    """A wrong password, another person's password, or an unknown name is refused."""
    for user, password in [("ana", "nope"), ("ana", BO_PASSWORD), ("whoever", PASSWORD)]:
        response = await locked.client.get("/api/conversations", headers=basic(user, password))
        assert response.status == 401, (user, password)
    garbled = await locked.client.get(
        "/api/conversations", headers={"Authorization": "Basic !!!not-base64"}
    )
    assert garbled.status == 401


async def test_event_stream_needs_the_password(locked: Console) -> None:
    """The SSE endpoint is 401 without credentials and streams with them."""
    bare = await locked.client.get("/api/events")
    assert bare.status == 401
    assert locked.surface.hub.subscribers == 0
    async with locked.client.get("/api/events", headers=basic("ana", PASSWORD)) as stream:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")


async def test_posts_need_sign_in_and_start_nothing(locked: Console) -> None:
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
async def test_non_json_post_is_415_and_starts_nothing(
    console: Console, headers: dict[str, str]
) -> None:
    """What an HTML form could send cross-site (no JSON content type) is refused with 415."""
    response = await console.client.post(
        f"/api/conversations/{CID}/messages", data=b'{"text": "deploy web"}', headers=headers
    )
    assert response.status == 415
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


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/form.js", "/static/style.css"])
async def test_page_and_assets_carry_the_csp(console: Console, path: str) -> None:
    """The page and its files are served with a strict CSP and nosniff."""
    response = await console.client.get(path)
    assert response.status == 200
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_page_has_no_inline_script(console: Console) -> None:
    """The page loads its scripts from /static, so the CSP needs no inline allowance."""
    page = await (await console.client.get("/")).text()
    assert '<script src="/static/app.js" defer></script>' in page
    assert '<script src="/static/form.js" defer></script>' in page
    # The only other script element is the page's wording, a JSON data block.
    assert page.count("<script") == 3
    assert '<script id="wording" type="application/json">{"title": ' in page
    assert "{{WORDING}}" not in page
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


async def test_who_answered_is_who_signed_in(locked: Console) -> None:
    """Ana starts and answers as herself; a name in the body changes nothing."""
    ana = basic("ana", PASSWORD)
    await locked.send("deploy web", headers=ana)
    (asked,) = [q for run in (await locked.feed(headers=ana))["runs"] for q in run["questions"]]
    assert (asked["yours"], asked["may_answer"]) == (True, "Only ana can answer this.")
    response = await locked.client.post(
        "/api/answer",
        json={"token": asked["token"], "answer": {"answers": {WHICH_ENV: "staging"}}, "name": "bo"},
        headers=ana,
    )
    assert response.status == 200
    await locked.service.wait_idle()
    first = (await locked.feed(headers=ana))["runs"][0]["questions"][0]
    assert first["closed_by"] == "ana"
    assert first["closed_text"].startswith("Answered by ana at ")


async def test_another_person_may_not_answer_your_question(locked: Console) -> None:
    """Bo sees Ana's question as not his, and his answer is refused with nothing spent."""
    ana, bo = basic("ana", PASSWORD), basic("bo", BO_PASSWORD)
    await locked.send("deploy web", headers=ana)
    seen_by_bo = (await locked.feed(headers=bo))["runs"][0]["questions"][0]
    assert seen_by_bo["yours"] is False
    listed = await (await locked.client.get("/api/conversations", headers=bo)).json()
    assert listed["you"] == "bo"
    assert (
        listed["conversations"][0]["waiting"],
        listed["conversations"][0]["waiting_on_you"],
    ) == (
        1,
        0,
    )
    refused = await locked.answer(
        seen_by_bo["token"], {"answers": {WHICH_ENV: "staging"}}, headers=bo
    )
    assert refused.status == 403
    still = (await locked.feed(headers=ana))["runs"][0]["questions"][0]
    assert still["status"] == "outstanding"


async def test_the_event_stream_cap_holds_per_client(make_console: ConsoleFactory) -> None:
    """Past the per-client cap a stream is 429 with a sentence; closing one frees a place."""
    console = await make_console(
        heartbeat_seconds=0.01, limits=ConsoleLimits(max_streams=10, max_streams_per_client=2)
    )
    first = await console.client.get("/api/events")
    second = await console.client.get("/api/events")
    assert (first.status, second.status) == (200, 200)
    third = await console.client.get("/api/events")
    assert third.status == 429
    assert "You have too many console pages open" in (await third.json())["error"]
    assert console.surface.hub.subscribers == 2
    first.close()

    async def admitted() -> int | None:
        again = await console.client.get("/api/events")
        again.close()
        return again.status if again.status == 200 else None

    assert await waiting.eventually(admitted, what="a page admitted again", seconds=5) == 200
    second.close()


async def test_the_event_stream_cap_holds_in_total(make_console: ConsoleFactory) -> None:
    """Past the total cap every client is refused with 429 and a sentence saying why."""
    console = await make_console(limits=ConsoleLimits(max_streams=2, max_streams_per_client=5))
    streams = [await console.client.get("/api/events") for _ in range(2)]
    assert [s.status for s in streams] == [200, 200]
    refused = await console.client.get("/api/events")
    assert refused.status == 429
    assert "open on this bot" in (await refused.json())["error"]
    assert console.surface.hub.subscribers == 2
    for stream in streams:
        stream.close()


async def test_with_sign_in_the_stream_cap_is_per_person(make_console: ConsoleFactory) -> None:
    """Signed-in people share an address behind a proxy; each still gets their own cap."""
    console = await make_console(
        users=USERS, limits=ConsoleLimits(max_streams=10, max_streams_per_client=1)
    )
    ana, bo = basic("ana", PASSWORD), basic("bo", BO_PASSWORD)
    first = await console.client.get("/api/events", headers=ana)
    second = await console.client.get("/api/events", headers=bo)
    assert (first.status, second.status) == (200, 200)
    again = await console.client.get("/api/events", headers=ana)
    assert again.status == 429
    for stream in (first, second):
        stream.close()
