"""Hypothesis strategies for what arrives at a door: real payloads, bent out of shape.

``bent(base)`` starts from a payload the platform really sends and
replaces or deletes a few fields anywhere in it with any JSON value, so
most examples get past the first checks and reach deeper code; with no
change drawn it is the real payload, which must keep working. Any JSON value
includes numbers no double holds (NaN, Infinity, integers of hundreds of
digits), JSON text holding them or nested 20,000 deep, and values nested past
every door's limit; ``numbered(base)`` puts one of those where ``base`` has a
number, so a schema's bounds, an edit's arguments and a form's answers get them.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

Path = tuple[Any, ...]

# Numbers no double holds: Python's json reads and writes them all (``NaN``, ``Infinity``,
# an integer of any length), and 1e999 arrives as infinity.
WILD_NUMBERS = st.sampled_from(
    [int("9" * 400), -int("9" * 400), 2**1024, 10**309]
) | st.sampled_from([float("nan"), float("inf"), float("-inf")])
# JSON text as a person might type it into a field shown as JSON: holding what JSON cannot
# carry, or nested far past any limit.
DEEP_TEXT = "[" * 20_000 + "]" * 20_000
WILD_TEXT = st.sampled_from(
    [
        '{"limit": NaN}',
        "[Infinity, -Infinity]",
        '{"limit": 1e999}',
        "9" * 400,
        "-" + "9" * 5000,
        DEEP_TEXT,
        '{"a": ' + DEEP_TEXT + "}",
    ]
)
# A value nested deeper than any door allows (as JSON, not text).
DEEP = st.integers(30, 300).map(lambda levels: _nested(levels))
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["", "²", "9" * 5000, "[" * 3000, "\x00", "é", "<@U1>", "1.5", "-1"])
    | WILD_NUMBERS
    | WILD_TEXT
    | DEEP
)
JSON = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _nested(levels: int) -> Any:
    value: Any = 1
    for level in range(levels):
        value = [value] if level % 2 else {"a": value}
    return value


def paths(value: Any, prefix: Path = ()) -> list[Path]:
    """Every path to a value inside ``value`` (dict keys and list indexes)."""
    found: list[Path] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, child in items:
        found.append((*prefix, key))
        found.extend(paths(child, (*prefix, key)))
    return found


def _at(value: Any, path: Path) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def bent(draw: st.DrawFn, base: Any, *, most: int = 3) -> Any:
    value = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, most))):
        options = paths(value)
        if not options:
            break
        path = draw(st.sampled_from(options))
        parent = _at(value, path[:-1])
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON)
    return value


@st.composite
def form_fields(draw: st.DrawFn, base: dict[str, str]) -> list[tuple[str, str]]:
    """A form's fields: some values replaced, some dropped, now and then one sent twice."""
    fields = dict(base)
    for key in draw(st.lists(st.sampled_from(sorted(base)), max_size=3, unique=True)):
        if draw(st.booleans()):
            del fields[key]
        else:
            fields[key] = draw(st.text(max_size=40) | st.sampled_from(["", "9" * 5000, "[" * 50]))
    pairs = list(fields.items())
    if pairs and draw(st.integers(0, 9)) == 0:
        pairs.append(pairs[0])
    return pairs


@st.composite
def numbered(draw: st.DrawFn, base: Any) -> Any:
    """``base`` with one of its numbers (or, having none, one of its values) replaced by a
    number no double holds, or by text holding one, or by nesting past every limit."""
    value = copy.deepcopy(base)
    everything = paths(value)
    numbers = [p for p in everything if isinstance(_at(value, p), int | float)]
    if not everything:
        return value
    path = draw(st.sampled_from(numbers or everything))
    _at(value, path[:-1])[path[-1]] = draw(WILD_NUMBERS | WILD_TEXT | DEEP)
    return value


# What PostgreSQL cannot store (NUL) or no store can encode (a lone surrogate).
UNSTORABLE = st.sampled_from(["\x00", "\ud800", "\udfff"])


@st.composite
def spiked(draw: st.DrawFn, base: Any) -> Any:
    """``base`` with a character no store keeps put into one of its strings, or a key."""
    value = copy.deepcopy(base)
    strings = [p for p in paths(value) if isinstance(_at(value, p), str)]
    if not strings:
        return value
    path = draw(st.sampled_from(strings))
    parent, character = _at(value, path[:-1]), draw(UNSTORABLE)
    if draw(st.integers(0, 4)) == 0 and isinstance(parent, dict):
        parent[f"{path[-1]}{character}"] = parent.pop(path[-1])
        return value
    text = parent[path[-1]]
    at = draw(st.integers(0, len(text)))
    parent[path[-1]] = text[:at] + character + text[at:]
    return value
