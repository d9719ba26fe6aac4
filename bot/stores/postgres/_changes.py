"""LISTEN/NOTIFY: every replica learns what every other one changed.

``issue``, ``spend`` and ``finish`` NOTIFY inside their own transactions
(see ``_rows.enqueue``), so PostgreSQL delivers the notice at commit, and
only if it commits. One dedicated connection per process LISTENs (pooled
connections come and go, and a LISTEN belongs to a session). When that
connection is lost it is dialled again with a capped backoff; notices sent
while it was down are lost, which a console page survives (it re-reads on
its next change or reload), and nothing else relies on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import asyncpg

from bot.stores.ports import Change
from bot.stores.postgres._db import Conn

CHANNEL = "bot_changes"


def notice(source: str) -> str:
    """A CTE body announcing on ``CHANNEL`` that each run in ``source`` changed.

    ``source`` must have ``run_id``, ``surface`` and ``conversation_key``
    columns. PostgreSQL delivers the notice at commit, and only if the
    transaction commits. The payload names the schema, since NOTIFY reaches
    every listener of the database, whatever its search_path.
    """
    return (
        f"SELECT pg_notify('{CHANNEL}', json_build_object('schema', current_schema(),"  # noqa: S608 - our own text
        " 'run_id', n.run_id, 'surface', n.surface, 'key', n.conversation_key)::text)"
        f" FROM {source} AS n"
    )


log = logging.getLogger(__name__)

# An idle LISTEN connection sees no traffic; a ping this often notices a
# silently dropped one (a restart's closed socket is noticed at once).
_KEEPALIVE_SECONDS = 10.0
_MAX_BACKOFF_SECONDS = 5.0
_CONNECTION_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError)


class PostgresChanges:
    """The change feed of one schema; ``start`` begins listening, ``close`` stops."""

    def __init__(self, url: str, *, schema: str, options: dict[str, Any]) -> None:
        self._url = url
        self._schema = schema
        self._options = options
        self._subscribers: list[Callable[[Change], None]] = []
        self._task: asyncio.Task[None] | None = None
        # Set while a LISTEN is in place (tests wait on it before changing anything).
        self.listening = asyncio.Event()

    def subscribe(self, callback: Callable[[Change], None]) -> Callable[[], None]:
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._listen_forever(), name="postgres change listener"
            )

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _listen_forever(self) -> None:
        delay = 0.1
        while True:
            try:
                conn = await asyncpg.connect(self._url, **self._options)
            except _CONNECTION_ERRORS as error:
                log.warning(
                    "change listener cannot reach PostgreSQL (%s); retrying in %.1f s",
                    type(error).__name__,
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, _MAX_BACKOFF_SECONDS)
                continue
            delay = 0.1
            try:
                await self._listen(conn)
            except _CONNECTION_ERRORS as error:
                log.warning(
                    "change listener lost PostgreSQL (%s); reconnecting", type(error).__name__
                )
            finally:
                self.listening.clear()
                conn.terminate()

    async def _listen(self, conn: Conn) -> None:
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _conn: lost.set())
        await conn.add_listener(CHANNEL, self._received)
        self.listening.set()
        while not lost.is_set():
            try:
                await asyncio.wait_for(lost.wait(), _KEEPALIVE_SECONDS)
            except TimeoutError:
                await conn.execute("SELECT 1")

    def _received(self, conn: object, pid: int, channel: str, payload: object) -> None:
        del conn, pid, channel
        try:
            notice = json.loads(str(payload))
            if notice.get("schema") != self._schema:
                return  # another deployment (or test) sharing the database
            change = Change(
                run_id=str(notice["run_id"]), surface=str(notice["surface"]), key=str(notice["key"])
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("ignoring a malformed change notice")
            return
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:
                log.exception("a change subscriber failed")
