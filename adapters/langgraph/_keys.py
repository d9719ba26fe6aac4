"""Where a question comes from in a graph, and the idempotency key that names it.

A key is a digest of the thread, the task's checkpoint namespace (the node's
name and its task id, stable across a resume because LangGraph derives the
task id from the checkpoint) and the question's index within the node's run.
A node that re-runs on resume therefore asks with the same key and gets the
question it asked before; a later run of the same thread is a new task, so
its questions are new ones.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

PREFIX = "langgraph:"
# The bridge's metadata key that carries where a question was asked; the
# webhook resumer reads the thread back from it.
METADATA_KEY = "langgraph"


def idempotency_key(*parts: Any) -> str:
    """A key of bounded length from JSON-able parts, the same for the same parts."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=repr)
    return PREFIX + hashlib.sha256(canonical.encode()).hexdigest()


def with_origin(metadata: dict[str, Any] | None, origin: dict[str, Any]) -> dict[str, Any]:
    """The caller's metadata with the question's origin under ``METADATA_KEY``."""
    return {**(metadata or {}), METADATA_KEY: origin}


def thread_of(metadata: dict[str, Any] | None) -> str | None:
    """The thread id a question of ours was asked from, or None for anyone else's."""
    origin = (metadata or {}).get(METADATA_KEY)
    if isinstance(origin, dict) and isinstance(origin.get("thread_id"), str):
        return str(origin["thread_id"])
    return None
