"""The whole app from create_app: every route behind the host allow-list, /metrics, /api errors."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import encode_basic_auth, web
from aiohttp.test_utils import TestClient, TestServer

from adapters.teams._package import build_manifest
from bot.app import create_app
from bot.app.settings import load_settings
from bot.service.running.runs import RUN_SERVICE
from tests.e2e._server import free_port
from tests.support import run_bot

AppClient = TestClient[web.Request, web.Application]
MakeClient = Callable[..., Awaitable[tuple[AppClient, web.Application]]]
FOREIGN = ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}", "", "[::1]:1"]
PASSWORD = "a long enough password"
# A bot set to bind beyond loopback at a public address: the settings under test (the
# TestServer itself listens on loopback only).
PUBLIC_BIND = {"BOT_HOST": "0.0.0.0", "BOT_PUBLIC_URL": "https://bot.example.com"}  # noqa: S104
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def make_client(tmp_path: Path) -> AsyncIterator[MakeClient]:
    clients: list[AppClient] = []

    async def make(**env: Any) -> tuple[AppClient, web.Application]:
        port = free_port()
        settings = load_settings(
            PORT=port,
            DATABASE_URL=f"sqlite:///{tmp_path / 'bot.sqlite3'}",
            BOT_DATA_DIR=str(tmp_path / "var"),
            **env,
        )
        app = create_app(settings)
        client = TestClient(TestServer(app, host="127.0.0.1", port=port))
        await client.start_server()
        clients.append(client)
        return client, app

    yield make
    for client in clients:
        await client.close()


def every_route(app: web.Application) -> list[tuple[str, str]]:
    """(method, concrete path) for each registered route, placeholders filled in."""
    found = []
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource else {}
        path = info.get("path") or info.get("formatter") or ""
        found.append((route.method, re.sub(r"\{[^}]+\}", "x", path)))
    return found


async def test_a_foreign_host_is_refused_on_every_route(make_client: MakeClient) -> None:
    """Each route, SSE and health included, answers 421 to any Host outside the list."""
    client, app = await make_client()
    routes = every_route(app)
    assert ("GET", "/api/events") in routes
    assert ("GET", "/healthz") in routes
    assert ("GET", "/metrics") in routes
    for method, path in [*routes, ("GET", "/api/not-a-route"), ("GET", "/not-a-page")]:
        for host in FOREIGN:
            header = host.format(port=client.port)
            response = await client.request(method, path, headers={"Host": header})
            assert response.status == 421, (method, path, header)
            if method == "HEAD":
                continue  # no body to read
            body = await response.json()
            if path.startswith("/v1/"):
                # The agents API's envelope carries the same sentence.
                assert body["error"]["code"] == "invalid_request"
                body = {"ok": False, "error": body["error"]["message"]}
            assert body["ok"] is False
            assert body["error"].endswith(".")


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
async def test_loopback_names_with_the_port_are_served(make_client: MakeClient, host: str) -> None:
    """The three loopback spellings with our port are let through to the route."""
    client, _ = await make_client()
    response = await client.get("/healthz", headers={"Host": host.format(port=client.port)})
    assert response.status == 200


async def test_a_public_bind_serves_only_its_public_host(make_client: MakeClient) -> None:
    """With BOT_PUBLIC_URL, that host is served and loopback names are not."""
    client, _ = await make_client(
        **PUBLIC_BIND,
        BOT_CONSOLE_USERS=f"ana:{PASSWORD}",
    )
    ours = await client.get("/healthz", headers={"Host": "bot.example.com"})
    assert ours.status == 200
    loopback = await client.get("/healthz", headers={"Host": f"127.0.0.1:{client.port}"})
    assert loopback.status == 421


async def test_origin_is_checked_against_the_list_not_the_host(make_client: MakeClient) -> None:
    """A POST whose Origin matches its own (foreign) Host is still refused."""
    client, _ = await make_client()
    good = f"http://127.0.0.1:{client.port}"
    same_site = await client.post(
        "/api/conversations/c-1/messages", json={"text": "hi"}, headers={"Origin": good}
    )
    assert same_site.status == 202
    rebound = await client.post(
        "/api/conversations/c-1/messages",
        json={"text": "hi"},
        headers={"Origin": "http://localhost:1"},
    )
    assert rebound.status == 403


async def test_metrics_need_sign_in_on_a_public_bind(make_client: MakeClient) -> None:
    """Beyond loopback /metrics is 401 without credentials and served with them."""
    client, _ = await make_client(
        **PUBLIC_BIND,
        BOT_CONSOLE_USERS=f"prom:{PASSWORD}",
    )
    host = {"Host": "bot.example.com"}
    bare = await client.get("/metrics", headers=host)
    assert bare.status == 401
    assert bare.headers["WWW-Authenticate"].startswith("Basic ")
    signed = await client.get(
        "/metrics", headers={**host, "Authorization": encode_basic_auth("prom", PASSWORD)}
    )
    assert signed.status == 200
    assert "bot_questions_open 0.0" in await signed.text()


async def test_metrics_have_an_open_questions_gauge_and_no_created_series(
    make_client: MakeClient,
) -> None:
    """The gauge counts open questions from the store; no *_created series are exported."""
    client, app = await make_client()
    sent = await client.post("/api/conversations/c-1/messages", json={"text": "deploy web"})
    assert sent.status == 202
    await app[RUN_SERVICE].wait_idle()
    text = await (await client.get("/metrics")).text()
    assert "bot_questions_open 1.0" in text
    assert "_created" not in text


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/api/nope", 404), ("DELETE", "/api/answer", 405), ("PUT", "/api/events", 405)],
)
async def test_api_errors_are_json(
    make_client: MakeClient, method: str, path: str, status: int
) -> None:
    """Unknown routes and wrong methods under /api answer JSON with a sentence."""
    client, _ = await make_client()
    response = await client.request(method, path)
    assert response.status == status
    assert response.content_type == "application/json"
    assert (await response.json())["error"].endswith(".")


@pytest.mark.parametrize(
    "path",
    [
        "/api/conversations?token=abc",
        "/api/conversations/x?next=eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJpIn0.c2lnbmF0dXJl",
        "/?ACCESS_TOKEN=1",
    ],
)
async def test_a_token_in_the_url_is_refused(make_client: MakeClient, path: str) -> None:
    """A token in the query string is refused with a sentence before any handler runs."""
    client, _ = await make_client()
    response = await client.get(path)
    assert response.status == 400
    assert "never accepted in a URL" in (await response.json())["error"]


async def test_metrics_agree_with_admin_stats_after_a_cancel_from_the_shell(
    make_client: MakeClient, tmp_path: Path
) -> None:
    """The pause counters are the store's: a shell cancel shows in /metrics as in `admin stats`."""
    client, app = await make_client()
    sent = await client.post("/api/conversations/c-1/messages", json={"text": "deploy web"})
    assert sent.status == 202
    await app[RUN_SERVICE].wait_idle()
    [open_question] = await app[RUN_SERVICE].stores.ledger.outstanding()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}",
        "BOT_DATA_DIR": str(tmp_path / "var"),
    }

    def admin(*words: str) -> str:
        return run_bot("admin", *words, cwd=tmp_path, env=env, check=True).stdout

    admin("cancel", open_question.interrupt_id, "wrong service")
    stats = admin("stats")
    assert "cancelled 1" in stats
    text = await (await client.get("/metrics")).text()
    assert "bot_pauses_cancelled_total 1.0" in text
    assert "bot_pauses_issued_total 1.0" in text
    assert "bot_questions_open 0.0" in text
    assert text.count("# TYPE bot_questions_open ") == 1


async def test_the_teams_packages_privacy_and_terms_links_answer(make_client: MakeClient) -> None:
    """The package links {website}/privacy and /terms; both are pages, public ones too."""
    client, _ = await make_client(
        **PUBLIC_BIND,
        BOT_CONSOLE="false",
    )
    manifest = build_manifest(
        app_id="a",
        name="n",
        developer="d",
        website="https://bot.example.com",
        commands=[],
        version="1.0.0",
    )
    for url in (manifest["developer"]["privacyUrl"], manifest["developer"]["termsOfUseUrl"]):
        path = url.removeprefix("https://bot.example.com")
        response = await client.get(path, headers={"Host": "bot.example.com"})
        assert response.status == 200, path
        assert response.content_type == "text/html"
        assert "<h1>" in await response.text()
