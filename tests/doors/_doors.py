"""The real app (``create_app``) in process, one door at a time, with what changed.

``Door`` serves the app on a loopback port and sends raw requests to it,
on a SQLite file or, given ``database_url``, a PostgreSQL schema; ``state``
is everything a request could change (every stored row, every Slack Web API
call, every Teams connector call); ``Logs`` catches any ERROR line or
traceback logged while a request was answered.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web

from bot.service.running.runs import RUN_SERVICE
from tests.stores._postgres import fresh_schema
from tests.support import app_server

# Calls out that only read: bolt asks who its token is (auth.test) on its
# first request, whatever the request was.
_READS = {"auth.test"}
# Rows that change with time rather than with requests.
# Not a change a request made: who drives a run, and the record of requests seen
# (kept to answer a replay as the first was, expiring with the signature's window).
_VOLATILE = {"leases", "seen_requests"}


class Logs(logging.Handler):
    """Every record at ERROR or above, and every record carrying a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bad: list[logging.LogRecord] = []
        self.warnings: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info or record.stack_info:
            self.bad.append(record)
        elif record.levelno == logging.WARNING:
            self.warnings.append(record.getMessage())

    def __enter__(self) -> Logs:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *_: object) -> None:
        logging.getLogger().removeHandler(self)

    def assert_clean(self) -> None:
        lines = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in self.bad]
        assert not lines, lines


class Door:
    """``create_app`` on 127.0.0.1, with a database file to read the state from."""

    def __init__(self, folder: Path, *, database_url: str | None = None, **env: Any) -> None:
        self.db = folder / "bot.sqlite3"
        self.database_url = database_url
        if database_url is not None:
            # A shared store refuses to start without explicit signing keys.
            env.setdefault("BOT_SIGNING_KEYS", f"k1:{'s' * 48}")
            env["DATABASE_URL"] = database_url
        self.server = app_server(folder, **env)
        self.port = self.server.port
        self.app: web.Application = self.server.app
        self.session: aiohttp.ClientSession | None = None
        self.outbound: list[Any] = []  # a fake platform's recorded calls

    async def __aenter__(self) -> Door:
        await self.server.start_server()
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.session is not None:
            await self.session.close()
        await self.server.close()

    async def send(
        self,
        path: str,
        body: bytes = b"",
        *,
        headers: dict[str, str] | None = None,
        method: str = "POST",
    ) -> tuple[int, str]:
        assert self.session is not None
        url = f"http://127.0.0.1:{self.port}{path}"
        async with self.session.request(
            method, url, data=body, headers=headers or {}, skip_auto_headers=("Content-Type",)
        ) as response:
            return response.status, await response.text()

    async def idle(self) -> None:
        await self.app[RUN_SERVICE].wait_idle()

    async def state(self) -> dict[str, Any]:
        """Every stored row and every call made out, after background work settles."""
        await self.idle()
        changes = [c for c in self.outbound if getattr(c, "method", "") not in _READS]
        rows: dict[str, Any] = {"outbound": len(changes)}
        if self.database_url is not None:
            return rows | await _postgres_rows(self.database_url)
        with sqlite3.connect(self.db) as db:
            tables = [
                name
                for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if name not in _VOLATILE and not name.startswith("sqlite_")
            ]
            for table in tables:
                rows[table] = sorted(map(repr, db.execute(f"SELECT * FROM {table}")))  # noqa: S608
        return rows


def assert_only_a_refusal_recorded(
    before: dict[str, Any], after: dict[str, Any], reason: str
) -> None:
    """Between two ``Door.state()`` reads nothing was spent: what moved is the record of a
    refusal for ``reason`` (its audit lines and its count)."""
    kept = ("audit", "audit_heads", "refusal_counts")  # a refusal is an audit line: its chain moves
    assert {k: v for k, v in after.items() if k not in kept} == {
        k: v for k, v in before.items() if k not in kept
    }
    added = set(after["audit"]) - set(before["audit"])
    assert added and all(f'"reason":"{reason}"' in row for row in added)


async def _postgres_rows(url: str) -> dict[str, Any]:
    """Every row of every table in the URL's schema (its search_path), as ``state`` reads."""
    base, _, schema = url.partition("?search_path=")
    conn = await asyncpg.connect(base, timeout=5)
    try:
        names = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
        rows: dict[str, Any] = {}
        for (name,) in names:
            if name in _VOLATILE:
                continue
            found = await conn.fetch(f'SELECT * FROM "{schema}"."{name}"')  # noqa: S608
            rows[name] = sorted(repr(tuple(row.values())) for row in found)
        return rows
    finally:
        await conn.close()


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@asynccontextmanager
async def door_on(backend: str, folder: Path, **env: Any) -> AsyncIterator[Door]:
    """A ``Door`` on ``backend`` (one of ``BACKENDS``): a SQLite file or a fresh schema."""
    if backend == "sqlite":
        async with Door(folder, **env) as door:
            yield door
        return
    async with fresh_schema() as url, Door(folder, database_url=url, **env) as door:
        yield door
