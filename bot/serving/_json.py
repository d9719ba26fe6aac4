"""JSON from a request body, with a nesting limit the standard parser lacks.

``json.loads`` recurses per level; thousands of levels end in a
RecursionError, which would otherwise surface as a 500 with a traceback.
"""

from __future__ import annotations

import json
from typing import Any

from bot.errors import BotError

DEFAULT_MAX_DEPTH = 32


class JsonRejected(BotError, ValueError):
    """The body is not JSON, or is nested deeper than allowed."""

    def __init__(self, *, too_deep: bool = False) -> None:
        super().__init__("JSON nested too deeply" if too_deep else "not JSON")
        self.too_deep = too_deep


def loads_limited(raw: bytes | str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse ``raw``; JsonRejected if it is not JSON or nests past ``max_depth``."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise JsonRejected(too_deep=True) from None
    except ValueError:
        raise JsonRejected() from None
    # Each level opens a bracket, so a text with few brackets cannot nest deep:
    # the walk below is for the texts that might.
    if _brackets(raw) > max_depth and _depth_exceeds(value, max_depth):
        raise JsonRejected(too_deep=True)
    return value


def _brackets(raw: bytes | str) -> int:
    if isinstance(raw, bytes):
        return raw.count(b"{") + raw.count(b"[")
    return raw.count("{") + raw.count("[")


def _depth_exceeds(value: Any, limit: int) -> bool:
    # Iterative, so checking depth cannot itself recurse too deep.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        # Only containers go on the stack: most values are scalars.
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
