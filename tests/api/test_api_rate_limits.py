"""Creates per API key per minute: 429 ``rate_limited`` with Retry-After, per key, per process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.api._http import API_CREATES
from bot.api._keys import keys_from_setting
from bot.client import Bridge, RateLimited
from bot.questions.records import ApiKey
from bot.serving import RateLimits
from bot.stores.ports import Stores
from bot.testing import FixedClock
from tests.api.test_api_keys import api_key
from tests.api.test_api_refusals import KEY, OTHER_KEY, ask, call, code
from tests.doors._doors import Door

SLOW_KEY = "s" * 40
KEYS = json.dumps(
    [
        {"name": "ci", "key": KEY, "routes": ["console:*"]},
        {"name": "other", "key": OTHER_KEY, "routes": ["*"]},
        {"name": "slow", "key": SLOW_KEY, "routes": ["*"], "creates_per_minute": 1},
    ]
)


def _door(folder: Path, clock: FixedClock) -> Door:
    door = Door(folder, BOT_API_KEYS=KEYS, BOT_API_CREATES_PER_MINUTE="3")
    # The app's own limiter, counting by a clock the test moves instead of sleeping.
    door.app[API_CREATES] = RateLimits("api-creates", clock=clock)
    return door


@pytest.fixture
async def door(tmp_path: Path, clock: FixedClock) -> AsyncIterator[Door]:
    async with _door(tmp_path, clock) as door:
        yield door


async def test_the_create_past_a_keys_limit_is_429_until_the_window_slides(
    door: Door, clock: FixedClock
) -> None:
    """Three a minute: the fourth is 429 rate_limited with Retry-After and creates nothing;
    another key still creates; once the clock passes the Retry-After, the key creates again."""
    for n in range(3):
        assert (await call(door, "POST", "/v1/questions", ask(f"q{n}")))[0] == 201
    before = await door.state()
    status, text = await door.send(
        "/v1/questions",
        json.dumps(ask("q3")).encode(),
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    assert status == 429
    refused = json.loads(text)
    assert code(refused) == "rate_limited"
    message = refused["error"]["message"]
    assert message.startswith("This API key may create questions at 3 a minute;")
    assert message.count(". ") == 0 and message.endswith(".")
    assert await door.state() == before
    assert (await call(door, "POST", "/v1/questions", ask("o1"), key=OTHER_KEY))[0] == 201
    wait = await _retry_after(door)
    clock.advance(wait)
    assert (await call(door, "POST", "/v1/questions", ask("q3")))[0] == 201


async def _retry_after(door: Door) -> int:
    assert door.session is not None
    url = f"http://127.0.0.1:{door.port}/v1/questions"
    headers = {"Authorization": f"Bearer {KEY}"}
    async with door.session.post(url, json=ask("peek"), headers=headers) as response:
        assert response.status == 429
        assert response.headers["Cache-Control"] == "no-store"
        return int(response.headers["Retry-After"])


async def test_a_key_may_name_its_own_limit(door: Door) -> None:
    """A BOT_API_KEYS entry's creates_per_minute is its own limit, not the deployment's."""
    assert (await call(door, "POST", "/v1/questions", ask("s0"), key=SLOW_KEY))[0] == 201
    status, refused = await call(door, "POST", "/v1/questions", ask("s1"), key=SLOW_KEY)
    assert (status, code(refused)) == (429, "rate_limited")
    assert "may create questions at 1 a minute" in refused["error"]["message"]


async def test_reads_are_not_counted(door: Door) -> None:
    """Only creates count: a key at its limit still lists and reads its questions."""
    for n in range(3):
        await call(door, "POST", "/v1/questions", ask(f"q{n}"))
    assert (await call(door, "POST", "/v1/questions", ask("q3")))[0] == 429
    assert (await call(door, "GET", "/v1/questions"))[0] == 200


async def test_each_process_counts_on_its_own(tmp_path: Path, clock: FixedClock) -> None:
    """Two bridges on one store (two replicas): a key at its limit on one creates on the
    other, since each process keeps its own counts (docs/api.md says so)."""
    async with _door(tmp_path, clock) as first, _door(tmp_path, clock) as second:
        for n in range(3):
            assert (await call(first, "POST", "/v1/questions", ask(f"q{n}")))[0] == 201
        assert (await call(first, "POST", "/v1/questions", ask("q3")))[0] == 429
        assert (await call(second, "POST", "/v1/questions", ask("q3")))[0] == 201


async def test_the_client_raises_rate_limited_with_the_retry_after(door: Door) -> None:
    """bot.client surfaces the 429 as RateLimited carrying Retry-After's seconds."""
    async with Bridge(f"http://127.0.0.1:{door.port}", SLOW_KEY) as bridge:
        await bridge.ask("Ship it?", route="console:ops")
        with pytest.raises(RateLimited) as raised:
            await bridge.ask("And this?", route="console:ops")
    assert raised.value.status == 429 and raised.value.code == "rate_limited"
    assert raised.value.retry_after is not None and raised.value.retry_after >= 1
    assert "may create questions at 1 a minute" in raised.value.message


async def test_a_stored_key_made_with_its_own_limit_keeps_it(tmp_path: Path) -> None:
    """api-key create --creates-per-minute 1: the store keeps it, list shows it, /v1 holds it."""
    async with Door(tmp_path) as door:
        made = api_key(door.db, "create", "ci", "--route", "*", "--creates-per-minute", "1")
        assert made.returncode == 0, made.stderr
        key = made.stdout.strip()
        assert "questions at 1 a minute" in made.stderr
        assert api_key(door.db, "list").stdout.split("\t")[:3] == ["ci", "*", "1/minute"]
        assert (await call(door, "POST", "/v1/questions", ask("a"), key=key))[0] == 201
        assert (await call(door, "POST", "/v1/questions", ask("b"), key=key))[0] == 429
    refused = api_key(door.db, "create", "two", "--route", "*", "--creates-per-minute", "0")
    assert refused.returncode == 1 and "from 1 to 100,000" in refused.stderr


async def test_every_store_keeps_a_keys_own_limit(stores: Stores) -> None:
    """SQLite and PostgreSQL keep creates_per_minute, and None for a key without one."""
    assert await stores.api.add_key(
        ApiKey("own", "h1", ("*",), 1.0, creates_per_minute=7, key_id="key_own")
    )
    assert await stores.api.add_key(ApiKey("default", "h2", ("*",), 2.0, key_id="key_default"))
    kept = {key.name: key.creates_per_minute for key in await stores.api.keys()}
    assert kept == {"own": 7, "default": None}
    found = await stores.api.key_by_hash("h1")
    assert found is not None and found.creates_per_minute == 7


@pytest.mark.parametrize("value", [0, -1, 1.5, "60", True, 100_001])
def test_a_configured_limit_that_is_not_a_whole_number_in_range_is_refused(
    value: object,
) -> None:
    """creates_per_minute in BOT_API_KEYS is 1 to 100,000; anything else names the fault."""
    entry = {"name": "ci", "key": KEY, "routes": ["*"], "creates_per_minute": value}
    with pytest.raises(ValueError, match="creates_per_minute must be"):
        keys_from_setting(json.dumps([entry]))
