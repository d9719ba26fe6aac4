"""What the gateway did with each approved call, kept on disk so a restart never runs one twice.

An approved question runs its call once. Before the gateway calls the upstream
it writes that it is about to (``started``), and after, the result (``done``),
each in its own committed transaction. A gateway killed between the two cannot
know whether the upstream ran the call, so the call is not run again: at most
once, and the model is told so. The question's idempotency key carries a
generation per call (``base``): once a closed question's outcome was handed to
the client, the same call made later asks anew.

A SQLite file in ``BOT_DATA_DIR``: one gateway process writes it at a time (the
bridge's own ``/mcp/gateway``, or one ``python -m bot mcp-gateway``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "mcp-gateway.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    base TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS forwards (
    question_id TEXT PRIMARY KEY,
    base TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('started', 'done')),
    result TEXT
);
"""


@dataclass(frozen=True, slots=True)
class Claimed:
    """This process is the one to call the upstream for the question."""


@dataclass(frozen=True, slots=True)
class InDoubt:
    """An earlier process started the call and died before recording its result."""


@dataclass(frozen=True, slots=True)
class Finished:
    """The call ran; ``result`` is the upstream's result as JSON text."""

    result: str


Claim = Claimed | InDoubt | Finished


class Journal:
    """The gateway's record of generations and forwarded calls."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: each statement below is its own transaction, committed before it returns.
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def generation(self, base: str) -> int:
        row = self._db.execute(
            "SELECT generation FROM generations WHERE base = ?", (base,)
        ).fetchone()
        return int(row[0]) if row else 0

    def delivered(self, base: str, generation: int) -> None:
        """The outcome of ``base``'s question of ``generation`` reached the client."""
        self._db.execute(
            "INSERT INTO generations (base, generation) VALUES (?, ?) "
            "ON CONFLICT (base) DO UPDATE SET generation = max(generation, excluded.generation)",
            (base, generation + 1),
        )

    def claim(self, question_id: str, base: str) -> Claim:
        """Claim the call of an approved question, or say why it is not this process's to run."""
        inserted = self._db.execute(
            "INSERT INTO forwards (question_id, base, state) VALUES (?, ?, 'started') "
            "ON CONFLICT (question_id) DO NOTHING",
            (question_id, base),
        ).rowcount
        if inserted:
            return Claimed()
        state, result = self._db.execute(
            "SELECT state, result FROM forwards WHERE question_id = ?", (question_id,)
        ).fetchone()
        return Finished(result) if state == "done" else InDoubt()

    def finish(self, question_id: str, result: str) -> None:
        self._db.execute(
            "UPDATE forwards SET state = 'done', result = ? WHERE question_id = ?",
            (result, question_id),
        )
