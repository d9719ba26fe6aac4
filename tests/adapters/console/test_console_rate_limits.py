"""The console's per-address limits: failed sign-ins, and answers, on a real loopback server.

Two addresses are two loopback sources (127.0.0.1 and 127.0.0.2), so the
server sees two peers exactly as it would two machines.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import encode_basic_auth

from adapters.console import ConsoleLimits
from tests.adapters.console.console_support import WHICH_ENV, Console, ConsoleFactory

PASSWORD = "correct horse battery"
USERS = {"ana": PASSWORD}
RIGHT = {"Authorization": encode_basic_auth("ana", PASSWORD)}


@pytest.fixture
async def elsewhere() -> AsyncIterator[aiohttp.ClientSession]:
    """A client whose connections come from 127.0.0.2: another address to the server."""
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        yield session


async def _from(
    session: aiohttp.ClientSession, console: Console, method: str, path: str, **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    url = console.client.make_url(path)
    async with session.request(method, url, **kwargs) as response:
        return response.status, await response.json()


async def test_wrong_passwords_from_one_address_are_429_there_only(
    make_console: ConsoleFactory, elsewhere: aiohttp.ClientSession
) -> None:
    """Five wrong passwords from one address: then even the right one is 429 with
    Retry-After there, while the right password from another address gets in."""
    console = await make_console(users=USERS)
    for n in range(5):
        wrong = {"Authorization": encode_basic_auth("ana", f"guess number {n}")}
        response = await console.client.get("/api/conversations", headers=wrong)
        assert response.status == 401
    throttled = await console.client.get("/api/conversations", headers=RIGHT)
    assert throttled.status == 429
    wait = int(throttled.headers["Retry-After"])
    assert wait >= 1
    body = await throttled.json()
    assert body["ok"] is False
    assert body["error"].startswith("Too many failed sign-ins came from your address")
    status, listed = await _from(elsewhere, console, "GET", "/api/conversations", headers=RIGHT)
    assert (status, listed["you"]) == (200, "ana")
    console.clock.advance(wait)
    assert (await console.client.get("/api/conversations", headers=RIGHT)).status == 200


async def test_answers_past_the_limit_from_one_address_are_429_there_only(
    make_console: ConsoleFactory, elsewhere: aiohttp.ClientSession
) -> None:
    """Two answers a minute: the third from that address is 429 with Retry-After and
    spends nothing; another address answers; after the wait the first answers again."""
    console = await make_console(limits=ConsoleLimits(answers_per_minute=2))
    await console.send("deploy web")
    token = (await console.open_question())["token"]
    for _ in range(2):
        refused = await console.answer("not a token", {"answers": {WHICH_ENV: "staging"}})
        assert refused.status == 403
    throttled = await console.answer(token, {"answers": {WHICH_ENV: "staging"}})
    assert throttled.status == 429
    wait = int(throttled.headers["Retry-After"])
    assert (await throttled.json())["error"].startswith("Too many answers came from your address")
    assert (await console.open_question())["token"] == token  # nothing spent
    other = {"token": "not a token", "answer": {"answers": {WHICH_ENV: "staging"}}}
    status, _ = await _from(elsewhere, console, "POST", "/api/answer", json=other)
    assert status == 403
    console.clock.advance(wait)
    answered = await console.answer(token, {"answers": {WHICH_ENV: "staging"}})
    assert answered.status == 200
