"""API keys made with ``python -m bot api-key``: shown once, kept as a hash, revoked at once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.api._keys import check_route, keys_from_setting
from bot.questions.records import ApiKey
from tests.api.test_api_refusals import ask, call
from tests.doors._doors import Door
from tests.stores._postgres import fresh_schema
from tests.support import bot_command_env, run_bot


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def database_url(request: pytest.FixtureRequest) -> AsyncIterator[str | None]:
    """None for the door's own SQLite file, else a fresh PostgreSQL schema's URL."""
    if request.param == "sqlite":
        yield None
        return
    async with fresh_schema() as url:
        yield url


def api_key(db: Path, *words: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = bot_command_env(url or f"sqlite:///{db}", db.parent / "var")
    if url is not None:
        env["BOT_SIGNING_KEYS"] = f"k1:{'s' * 48}"
    return run_bot("api-key", *words, env=env)


async def test_a_created_key_works_until_revoked_and_is_never_stored(tmp_path: Path) -> None:
    """create prints the key; /v1 takes it for its routes only; revoke makes it a 401."""
    async with Door(tmp_path) as door:
        made = api_key(door.db, "create", "ci", "--route", "console:*")
        assert made.returncode == 0, made.stderr
        key = made.stdout.strip()
        assert key.startswith("hitl_") and len(key) >= 40
        with sqlite3.connect(door.db) as db:
            stored = json.dumps(db.execute("SELECT * FROM api_keys").fetchall())
        assert key not in stored and "console:*" in stored
        status, created = await call(door, "POST", "/v1/questions", ask(), key=key)
        assert status == 201, created
        slack = ask("two", route={"surface": "slack", "conversation": "C1"})
        assert (await call(door, "POST", "/v1/questions", slack, key=key))[0] == 403
        listed = api_key(door.db, "list")
        assert listed.stdout.split("\t")[:2] == ["ci", "console:*"] and key not in listed.stdout
        taken = api_key(door.db, "create", "ci", "--route", "console:*")
        assert taken.returncode == 1 and "exists" in taken.stderr
        assert api_key(door.db, "revoke", "ci").returncode == 0
        assert (await call(door, "GET", "/v1/questions", key=key))[0] == 401
        assert api_key(door.db, "revoke", "ci").returncode == 1
        # Made and revoked once each, by the shell's user, in the audit (the key never is).
        with sqlite3.connect(door.db) as db:
            events = db.execute(
                "SELECT kind, actor, detail, chain FROM audit WHERE kind LIKE 'api-key-%'"
            ).fetchall()
        assert [(kind, chain) for kind, _, _, chain in events] == [
            ("api-key-created", "(bridge)"),
            ("api-key-revoked", "(bridge)"),
        ]
        assert all(
            actor.startswith("shell:") and key not in detail for _, actor, detail, _ in events
        )


async def test_create_with_replace_revokes_the_earlier_key_and_makes_a_new_one(
    tmp_path: Path,
) -> None:
    """`create --replace` run twice (a setup pasted again): both succeed, the first key gets
    401 and the second works."""
    async with Door(tmp_path) as door:
        words = ("create", "agents", "--route", "console:*", "--replace")
        first = api_key(door.db, *words)
        assert first.returncode == 0, first.stderr
        assert "revoked" not in first.stderr
        again = api_key(door.db, *words)
        assert again.returncode == 0, again.stderr
        assert "# revoked the earlier key named agents: requests with it get 401 now" in (
            again.stderr
        )
        old, new = first.stdout.strip(), again.stdout.strip()
        assert (await call(door, "GET", "/v1/questions", key=old))[0] == 401
        assert (await call(door, "GET", "/v1/questions", key=new))[0] == 200
        listed = api_key(door.db, "list")
        assert len(listed.stdout.splitlines()) == 1


def test_a_key_without_routes_is_refused_where_it_is_made(tmp_path: Path) -> None:
    """No --route: refused in one line naming how to give routes, and no key is made."""
    (tmp_path / "var").mkdir()
    db = tmp_path / "bot.sqlite3"
    refused = api_key(db, "create", "ci")
    assert refused.returncode == 1 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert "names no routes: name the routes this key may post to" in line, line
    assert "--route" in line and "'*' for everywhere" in line
    assert "no keys" in api_key(db, "list").stderr


@pytest.mark.parametrize("routes", [None, []])
def test_a_configured_key_without_routes_is_refused(routes: list[str] | None) -> None:
    """A BOT_API_KEYS entry with no routes may not post anywhere by default: it is refused."""
    entry: dict[str, object] = {"name": "ci", "key": "k" * 40}
    if routes is not None:
        entry["routes"] = routes
    with pytest.raises(ValueError, match="names no routes") as refused:
        keys_from_setting(json.dumps([entry]))
    assert '"routes": [' in str(refused.value)
    assert keys_from_setting(json.dumps([{**entry, "routes": ["*"]}]))[0].routes == ("*",)


def test_listing_no_keys_says_so(tmp_path: Path) -> None:
    """`api-key list` on an empty store says "no keys" (on stderr) rather than nothing."""
    listed = api_key(tmp_path / "bot.sqlite3", "list")
    assert listed.returncode == 0 and listed.stdout == ""
    assert listed.stderr.startswith("no keys: make one with api-key create NAME --route")


async def test_a_key_made_again_under_a_revoked_name_sees_nothing_of_the_old_one(
    tmp_path: Path, database_url: str | None
) -> None:
    """revoke ci, create ci: the new key lists, reads or cancels none of the old key's work."""
    async with Door(tmp_path, database_url=database_url) as door:
        old = api_key(door.db, "create", "ci", "--route", "console:*", url=database_url)
        assert old.returncode == 0, old.stderr
        status, asked = await call(door, "POST", "/v1/questions", ask(), key=old.stdout.strip())
        assert status == 201, asked
        first_id = api_key(door.db, "list", url=database_url).stdout.split("\t")[4]
        assert api_key(door.db, "revoke", "ci", url=database_url).returncode == 0
        new = api_key(door.db, "create", "ci", "--route", "console:*", url=database_url)
        assert new.returncode == 0, new.stderr
        key = new.stdout.strip()
        second_id = api_key(door.db, "list", url=database_url).stdout.split("\t")[4]
        assert first_id.startswith("key_") and second_id.startswith("key_")
        assert first_id != second_id
        assert await call(door, "GET", "/v1/questions", key=key) == (
            200,
            {"data": [], "next_cursor": None},
        )
        path = f"/v1/questions/{asked['id']}"
        assert (await call(door, "GET", path, key=key))[0] == 404
        assert (await call(door, "POST", f"{path}/cancel", {"reason": "x"}, key=key))[0] == 404
        # Its idempotency key is its own too: the same one asks a new question.
        status, again = await call(door, "POST", "/v1/questions", ask(), key=key)
        assert status == 201 and again["id"] != asked["id"], again


def test_a_keys_email_route_is_one_plain_address_in_one_spelling() -> None:
    """A key's email route is refused unless one plain address, is kept lowercased, and
    allows the request's route to that inbox however its case is spelt."""
    assert check_route("email:Ana@Example.com") == "email:ana@example.com"
    assert check_route("email:*") == "email:*"
    for bad in ('email:"ana"@example.com', "email:ana@example.com,eve@evil.example"):
        with pytest.raises(ValueError, match="give an email route one plain address"):
            check_route(bad)
    key = ApiKey("ci", "", ("email:ana@example.com",), key_id="key_ci")
    assert key.may_use("email", "Ana@Example.COM") and not key.may_use("email", "bo@example.com")
    # A key stored before its routes were checked still names the one inbox.
    older = ApiKey("ci", "", ("email:Ana@Example.com",), key_id="key_ci")
    assert older.may_use("email", "ana@example.com")
