"""A store that cannot be opened or written at start: one line saying what to do."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bot.__main__ import main
from bot.stores.sqlite import SqliteStores
from tests.e2e._server import free_port
from tests.stores._postgres import BASE_URL, admin_connection
from tests.test_cli import bot


@pytest.mark.parametrize(
    "argv", [["check"], ["serve"], ["admin", "pending"], ["admin", "cancel", "int_x"]]
)
def test_a_read_only_store_is_one_line_and_exit_1(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def read_only(*_: Any, **__: Any) -> SqliteStores:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(SqliteStores, "open", read_only)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'bot.sqlite3'}")
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("PORT", str(free_port()))
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("store error: DATABASE_URL: OperationalError: attempt to write")
    assert not any("Traceback" in line for line in err), err


def _check(tmp_path: Path, url: str) -> list[str]:
    """`python -m bot check` against ``url``: its stderr lines (it must exit 2)."""
    env = {"DATABASE_URL": url, "BOT_SIGNING_KEYS": f"k1:{'s' * 48}"}
    done = bot(tmp_path, "check", env=env)
    assert done.returncode == 2, done.stdout
    return done.stderr.splitlines()


@pytest.mark.postgres
async def test_a_missing_database_says_how_to_create_it(tmp_path: Path) -> None:
    """No such database: the line says so and how to create it, not an asyncpg class."""
    await (await admin_connection()).close()  # skips without a PostgreSQL
    base, _, _ = BASE_URL.partition("?")[0].rpartition("/")
    [line] = await asyncio.to_thread(_check, tmp_path, f"{base}/no_such_database_here")
    assert line == (
        "configuration error: PostgreSQL has no database 'no_such_database_here': create it "
        '(createdb no_such_database_here, or CREATE DATABASE "no_such_database_here"; in psql), '
        "or name another one in DATABASE_URL"
    )


@pytest.mark.postgres
async def test_a_refused_role_says_to_check_the_role_and_password(tmp_path: Path) -> None:
    """An unknown role (or a wrong password): one line naming those, never the URL."""
    await (await admin_connection()).close()
    parts = urlsplit(BASE_URL)
    url = f"postgresql://no_such_role:a-secret@{parts.hostname}:{parts.port or 5432}{parts.path}"
    [line] = await asyncio.to_thread(_check, tmp_path, url)
    assert line.startswith(
        "configuration error: PostgreSQL refused the role or password in DATABASE_URL"
    ), line
    assert "a-secret" not in line and "Error" not in line


def test_no_server_at_the_address_says_to_start_one(tmp_path: Path) -> None:
    """Nothing listening on the URL's port: the line names the address and the fix."""
    port = free_port()
    [line] = _check(tmp_path, f"postgresql://bot:a-secret@127.0.0.1:{port}/bot")
    assert line == (
        f"configuration error: nothing answers for PostgreSQL at 127.0.0.1:{port}: "
        "start the server, or fix the host and port in DATABASE_URL"
    )


def test_a_host_that_does_not_resolve_says_so(tmp_path: Path) -> None:
    """A typo in the database host: the line says the host does not resolve, not gaierror."""
    [line] = _check(tmp_path, "postgresql://bot:a-secret@db.no-such-host.invalid:5432/bot")
    assert line == (
        "configuration error: the PostgreSQL host 'db.no-such-host.invalid' in DATABASE_URL "
        "does not resolve: check its spelling (or that this machine's DNS knows it)"
    )
