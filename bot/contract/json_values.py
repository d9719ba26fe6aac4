"""JSON values as the bridge keeps them: numbers a double holds, text read strictly, and
one spelling to compare two values by.

JSON (RFC 8259) has no NaN or Infinity, and a number is only as good as the
reader at the other end: I-JSON (RFC 7493) holds every reader to an IEEE
double. Python's ``json`` is more lenient: it reads ``NaN``, ``Infinity``,
``1e999`` (as infinity) and integers of any length, which later overflow a
float or come back from a store as ``null``. So every number a question
carries (its arguments, an edit, a form's answer or bounds) must be finite as
a double, and text a person typed as JSON is read with these rules and a
depth limit (the standard parser recurses per level, so thousands of
brackets end in a RecursionError).

Two values are the same when their canonical texts are: keys sorted, no
whitespace, and each number spelled once (an integral float as its integer,
as RFC 8785 spells numbers, so ``2`` and ``2.0`` are one number), while
``true`` stays ``true`` and is never ``1``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from bot.contract.errors import JsonTextError


def compiled(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode``, its C encoder built once rather than on every call (most of the
    cost of encoding a row's small values). Without circular-reference checking: a value
    that holds itself ends in a RecursionError instead of a ValueError; our values are
    trees built from JSON."""
    c_encoder = _c_encoder(encoder)
    if c_encoder is None or encoder.indent is not None:
        return encoder.encode
    return lambda value: "".join(c_encoder(value, 0))


def _c_encoder(encoder: json.JSONEncoder) -> Any:
    try:
        import _json
    except ImportError:  # an interpreter without the C accelerator
        return None
    strings = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else None
    return _json.make_encoder(
        None,
        encoder.default,
        strings or json.encoder.encode_basestring,
        None,
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )


# What a refusal says a number must be: the double's range, rounded down to a round figure
# (a number between it and the double's largest is still kept).
FINITE = "must be a finite number within ±1e308"
# Past this many digits an integer is no double (and Python will not even read it as text).
_MOST_DIGITS = 309
_NUMBERS = "JSON numbers must be finite and within ±1e308"


def is_number(value: Any) -> bool:
    """``value`` is a JSON number the bridge keeps: an int or float (not a bool), finite
    as a double."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past the double's range
        return False


def first_unkept_number(value: Any, *, field: str = "") -> str | None:
    """Where the first number ``value`` holds that is not finite as a double is
    (``payload.arguments.limit``; ``field`` itself for a number at the top), or None."""
    # Iterative, so a deep value cannot make the walk itself recurse too deep.
    stack: list[tuple[Any, str]] = [(value, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            # Reversed onto the stack, so the first field is reported first.
            stack.extend(
                (child, f"{where}.{key}" if where else str(key))
                for key, child in reversed(list(item.items()))
            )
        elif isinstance(item, list):
            stack.extend((child, f"{where}.{i}") for i, child in reversed(list(enumerate(item))))
        elif isinstance(item, int | float) and not isinstance(item, bool) and not is_number(item):
            return where
    return None


def read_json_text(text: str, *, max_depth: int) -> Any:
    """``text`` read as JSON the bridge keeps; ``JsonTextError`` with a phrase for beside the
    field (``syntax`` when it is not JSON at all, rather than JSON holding NaN, Infinity, a
    number past a double, or nesting past ``max_depth``)."""
    try:
        value = json.loads(
            text, parse_constant=_no_constant, parse_int=_integer, parse_float=_fraction
        )
    except JsonTextError:
        raise
    except RecursionError:
        raise JsonTextError(f"nests more than {max_depth} levels deep") from None
    except ValueError:
        raise JsonTextError("must be JSON", syntax=True) from None
    if depth(value) > max_depth:
        raise JsonTextError(f"nests more than {max_depth} levels deep")
    return value


def _no_constant(name: str) -> Any:
    raise JsonTextError(f"holds {name}, which is not a JSON number; {_NUMBERS}")


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > _MOST_DIGITS:
        raise JsonTextError(f"holds an integer of {len(digits)} digits; {_NUMBERS}")
    number = int(digits)
    if not is_number(number):
        raise JsonTextError(f"holds an integer past a double; {_NUMBERS}")
    return number


def _fraction(text: str) -> float:
    number = float(text)
    if not is_number(number):
        raise JsonTextError(f"holds {text[:20]}, past a double; {_NUMBERS}")
    return number


def depth(value: Any) -> int:
    """How many levels of objects and arrays ``value`` nests (0 for a scalar)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def canonical(value: Any) -> str:
    """``value``'s one spelling: sorted keys, no whitespace, integral floats as integers;
    ``ValueError`` for a number that is not finite as a double. ``value`` nests as deep as
    a question's arguments may, at most (the spelling recurses)."""
    return json.dumps(
        _spelled(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def same_json(one: Any, other: Any) -> bool:
    """``one`` and ``other`` are the same JSON value (``canonical``): ``true`` is not ``1``,
    ``2`` is ``2.0``, and key order does not matter."""
    # Told apart by depth first, without recursing: so a value as deep as a request may be
    # is compared with one a question carries (bounded) without spelling it out.
    if depth(one) != depth(other):
        return False
    return canonical(one) == canonical(other)


def _spelled(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _spelled(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_spelled(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
