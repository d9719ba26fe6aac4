"""A fresh PostgreSQL schema per test, so parallel runs and engineers never collide.

The server is ``BOT_TEST_POSTGRES_URL`` (default: the local one on 5432).
Unreachable, the test skips with one line, except under ``CI``, where it
fails: CI starts PostgreSQL, so a skip there would hide a broken suite.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

BASE_URL = os.environ.get("BOT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


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
    """A fresh CI cluster may lack the test database: create it from ``postgres``."""
    base, _, name = BASE_URL.rpartition("/")
    conn = await asyncpg.connect(f"{base}/postgres", timeout=5)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    except asyncpg.DuplicateDatabaseError:
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
