"""A version-12 schema's API rows (before key ids), written raw for the migration tests.

Key ``ci`` is stored; ``env`` is not (a ``BOT_API_KEYS`` entry's name, as far as
the store can tell). Statements use ``?``; ``numbered`` spells them for PostgreSQL.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.api import settle_keys
from bot.api._keys import keys_from_setting
from bot.stores.ports import Stores

_RUN = (
    "INSERT INTO runs (run_id, scope, surface, requester, text, created_at, conversation,"
    " status, updated_at, final_text)"
    " VALUES (?, 'c1', 'console', ?, 'deploy', 1.0, '{\"key\": \"c1\"}', 'remote', 1.0, '')"
)
_PAUSE = (
    "INSERT INTO pauses (interrupt_id, run_id, scope, name, tool_call_id, checkpoint_id,"
    " payload, issued_at, expires_at, root_run_id, session_id, thread_id, status, closed_by)"
    " VALUES (?, ?, 'c1', 'ask_user', ?, '', '{}', 1.0, 1e12, '', '', '', 'outstanding', '')"
)
_QUESTION = (
    "INSERT INTO api_questions (interrupt_id, key_name, idempotency_key, body_hash, kind,"
    " created_at) VALUES (?, ?, ?, 'h', 'ask_user', ?)"
)
_KEY = (
    "INSERT INTO api_keys (name, key_hash, routes, created_at) VALUES ('ci', 'h-ci', '[\"*\"]', 1)"
)
# interrupt id, key name, idempotency key, created at.
QUESTIONS = [("i1", "ci", "one", 1.0), ("i2", "ci", "two", 2.0), ("i3", "env", "one", 3.0)]


def statements() -> list[tuple[str, tuple[Any, ...]]]:
    """The rows, as (statement, parameters) in the order to run them."""
    rows: list[tuple[str, tuple[Any, ...]]] = [(_KEY, ())]
    for interrupt_id, name, idempotency_key, at in QUESTIONS:
        run_id = f"r{interrupt_id}"
        rows.append((_RUN, (run_id, f"api:{name}")))
        rows.append((_PAUSE, (interrupt_id, run_id, f"call-{interrupt_id}")))
        rows.append((_QUESTION, (interrupt_id, name, idempotency_key, at)))
    return rows


def numbered(statement: str) -> str:
    """``statement`` with PostgreSQL's ``$1, $2 ...`` for its ``?``."""
    count = iter(range(1, 100))
    return re.sub(r"\?", lambda _: f"${next(count)}", statement)


async def keys_carry_their_old_questions(stores: Stores) -> None:
    """What version 13 made of ``statements()``: each question its key's, by id."""
    (ci,) = await stores.api.keys()
    assert ci.name == "ci" and ci.key_id.startswith("key_")

    async def ids(key_id: str) -> list[str]:
        page = await stores.api.page(key_id, status=None, run_ref=None, before=None, limit=10)
        return [view.request.interrupt_id for view in page]

    assert await ids(ci.key_id) == ["i2", "i1"]
    found = await stores.api.by_idempotency_key(ci.key_id, "one")
    assert found is not None and found.request.interrupt_id == "i1"
    (env,) = keys_from_setting(json.dumps([{"name": "env", "key": "e" * 40, "routes": ["*"]}]))
    assert await ids(env.key_id) == []
    await settle_keys([env], stores.api)
    assert await ids(env.key_id) == ["i3"]
    assert await ids(ci.key_id) == ["i2", "i1"]
