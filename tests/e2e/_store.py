"""A bot process's store as a test reads it: rows, counts, an outbox all delivered."""

from __future__ import annotations

import sqlite3
import time

import asyncpg

from tests import waiting
from tests.e2e._server import BotServer

SETTLE_SECONDS = 15.0


def query(bot: BotServer, sql: str, *args: object) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(bot.folder / "bot.sqlite3")
    try:
        return list(conn.execute(sql, args))
    finally:
        conn.close()


def count(bot: BotServer, sql: str, *args: object) -> int:
    ((n,),) = query(bot, sql, *args)
    return int(n)  # type: ignore[call-overload]


async def all_delivered(bot: BotServer) -> None:
    """Readiness wait: every outbox row done (so a kill now leaves nothing in flight)."""
    try:
        await waiting.eventually(
            lambda: not count(bot, "SELECT COUNT(*) FROM outbox WHERE state <> 'done'"),
            what="every delivery done",
            seconds=SETTLE_SECONDS,
        )
    except AssertionError as timed_out:
        rows = query(bot, "SELECT id, kind, state FROM outbox")
        raise AssertionError(f"deliveries still pending: {rows}") from timed_out


async def overdue(bot: BotServer, interrupt_id: str) -> None:
    """Bring a question's expiry to the past in the bot's own store, SQLite or PostgreSQL, as
    its TTL running out would (the API's shortest is a minute); the sweeper expires it next."""
    url = bot.env["DATABASE_URL"]
    past = time.time() - 1
    if url.startswith("sqlite"):
        conn = sqlite3.connect(bot.folder / "bot.sqlite3")
        try:
            with conn:
                sql = "UPDATE pauses SET expires_at = ? WHERE interrupt_id = ?"
                conn.execute(sql, (past, interrupt_id))
        finally:
            conn.close()
        return
    pg = await asyncpg.connect(url)
    try:
        sql = "UPDATE pauses SET expires_at = $1 WHERE interrupt_id = $2"
        await pg.execute(sql, past, interrupt_id)
    finally:
        await pg.close()
