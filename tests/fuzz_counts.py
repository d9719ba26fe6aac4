"""How many examples each fuzzed door was sent in this session (printed at the end)."""

from __future__ import annotations

from collections import Counter

EXAMPLES: Counter[str] = Counter()


def count(door: str) -> None:
    EXAMPLES[door] += 1
