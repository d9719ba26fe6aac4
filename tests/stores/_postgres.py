"""A fresh PostgreSQL schema per test, so parallel runs and engineers never collide.

The server is ``BOT_TEST_POSTGRES_URL`` (default: the local one on 5432).
Unreachable, the test skips with one line, except under ``CI``, where it
fails: CI starts PostgreSQL, so a skip there would hide a broken suite.

Under pytest-xdist each worker has a database of its own beside that one
(``test_gw0``, ``test_gw1``, ...; created, from a connection to it, when
missing): NOTIFY channels and advisory locks are per database, so one
worker's change feed and migrations never reach another's.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

CONFIGURED_URL = os.environ.get(
    "BOT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def _database_url(url: str, database: str) -> str:
    """``url`` naming ``database`` instead of its own."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{database}"))


def _database_of(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


# pytest-xdist names each worker (gw0, gw1, ...) in its environment before any import.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
BASE_URL = (
    _database_url(CONFIGURED_URL, f"{_database_of(CONFIGURED_URL)}_{_WORKER}")
    if _WORKER
    else CONFIGURED_URL
)


async def admin_connection() -> asyncpg.Connection:
    """A plain connection to the test server; skips (or fails in CI) if there is none."""
    try:
        try:
            return await asyncpg.connect(BASE_URL, timeout=5)
        except asyncpg.InvalidCatalogNameError:
            await _create_test_database()
            return await asyncpg.connect(BASE_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        reason = f"PostgreSQL unreachable at the test URL ({type(error).__name__})"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests")
        pytest.skip(reason)


async def _create_test_database() -> None:
    """A fresh CI cluster may lack the test database: create it from ``postgres``; a worker's
    own database is then created from a connection to it."""
    configured = _database_of(CONFIGURED_URL)
    try:
        conn = await asyncpg.connect(CONFIGURED_URL, timeout=5)
    except asyncpg.InvalidCatalogNameError:
        await _create(_database_url(CONFIGURED_URL, "postgres"), configured)
        conn = await asyncpg.connect(CONFIGURED_URL, timeout=5)
    await conn.close()
    if BASE_URL != CONFIGURED_URL:
        await _create(CONFIGURED_URL, _database_of(BASE_URL))


async def _create(url: str, database: str) -> None:
    """``CREATE DATABASE`` over a connection to ``url``; one made meanwhile is as good."""
    conn = await asyncpg.connect(url, timeout=5)
    try:
        await conn.execute(f'CREATE DATABASE "{database}"')
    except (asyncpg.DuplicateDatabaseError, asyncpg.UniqueViolationError):
        pass  # created meanwhile by a parallel run
    finally:
        await conn.close()


def schema_url(schema: str) -> str:
    return f"{BASE_URL}?search_path={schema}"


@asynccontextmanager
async def fresh_schema() -> AsyncIterator[str]:
    """Create an empty schema, yield a DATABASE_URL pointing into it, drop it after."""
    schema = f"test_{secrets.token_hex(6)}"
    conn = await admin_connection()
    try:
        await conn.execute(f'CREATE SCHEMA "{schema}"')
    finally:
        await conn.close()
    try:
        yield schema_url(schema)
    finally:
        # A connection of its own: a test may have restarted the server meanwhile.
        conn = await admin_connection()
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()
