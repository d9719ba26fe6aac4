"""API keys made with ``python -m bot api-key``: shown once, kept as a hash, revoked at once."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.api.test_api_refusals import ask, call
from tests.doors._doors import Door


def api_key(db: Path, *words: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "DATABASE_URL"))}
    env |= {"DATABASE_URL": f"sqlite:///{db}", "BOT_DATA_DIR": str(db.parent / "var")}
    return subprocess.run(
        [sys.executable, "-m", "bot", "api-key", *words],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )


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
        assert api_key(door.db, "create", "ci").returncode == 1  # the name is taken
        assert api_key(door.db, "revoke", "ci").returncode == 0
        assert (await call(door, "GET", "/v1/questions", key=key))[0] == 401
        assert api_key(door.db, "revoke", "ci").returncode == 1
