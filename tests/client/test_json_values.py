"""JSON values as the bridge keeps them: numbers a double holds, strict text, one spelling."""

from __future__ import annotations

from typing import Any

import pytest

from bot.client.errors import JsonTextError
from bot.contract.json_values import (
    canonical,
    first_unkept_number,
    is_number,
    read_json_text,
    same_json,
)

HUGE = int("9" * 400)


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (0, True),
        (-(2**63), True),
        (1e308, True),
        (int(1e308), True),
        (HUGE, False),
        (-HUGE, False),
        (float("nan"), False),
        (float("inf"), False),
        (True, False),
        ("1", False),
    ],
)
def test_a_number_is_kept_when_a_double_holds_it(value: Any, kept: bool) -> None:
    """Finite as a double, whatever its Python type; a bool or a string is no number."""
    assert is_number(value) is kept


def test_the_first_number_past_a_double_is_named_by_its_path() -> None:
    """The walk names where it is, the first field first; None when every number is kept."""
    value = {"a": 1, "b": [2, {"c": float("nan")}], "d": HUGE}
    assert first_unkept_number(value, field="payload") == "payload.b.1.c"
    assert first_unkept_number({"a": [1, 2.5, True, None, "NaN"]}) is None
    assert first_unkept_number(float("inf")) == ""


TEXT_REFUSED = [
    ('{"a": NaN}', "holds NaN"),
    ('{"a": Infinity}', "holds Infinity"),
    ("[-Infinity]", "holds -Infinity"),
    ('{"limit": 1e999}', "holds 1e999, past a double"),
    ("9" * 400, "holds an integer of 400 digits"),
    ("9" * 5000, "holds an integer of 5000 digits"),
    ("[" * 20_000 + "]" * 20_000, "nests more than 32 levels deep"),
    ("[" * 33 + "]" * 33, "nests more than 32 levels deep"),
]


@pytest.mark.parametrize(("text", "problem"), TEXT_REFUSED)
def test_text_holding_what_json_cannot_carry_is_refused_with_a_phrase(
    text: str, problem: str
) -> None:
    """NaN, Infinity, a number past a double and deep nesting: a phrase for beside the
    field, told apart from text that is not JSON at all."""
    with pytest.raises(JsonTextError) as caught:
        read_json_text(text, max_depth=32)
    assert problem in caught.value.message
    assert not caught.value.syntax


def test_text_that_is_not_json_says_so() -> None:
    """Not JSON at all: ``syntax``, so a field that takes any value can keep it as text."""
    with pytest.raises(JsonTextError) as caught:
        read_json_text("prod", max_depth=32)
    assert caught.value.syntax and caught.value.message == "must be JSON"


def test_text_within_the_rules_is_read_exactly() -> None:
    """A long integer keeps every digit; depth at the limit is fine."""
    assert read_json_text('{"id": 12345678901234567891}', max_depth=32) == {
        "id": 12345678901234567891
    }
    assert read_json_text("[" * 32 + "]" * 32, max_depth=32) is not None


def test_values_are_compared_as_canonical_json() -> None:
    """``true`` is not ``1``, ``2`` is ``2.0``, key order and whitespace do not matter."""
    assert not same_json({"dry_run": True}, {"dry_run": 1})
    assert not same_json({"a": "1"}, {"a": 1})
    assert same_json({"a": 2, "b": [1.0]}, {"b": [1], "a": 2.0})
    assert canonical({"b": 1, "a": [True, None, "x"]}) == '{"a":[true,null,"x"],"b":1}'
    with pytest.raises(ValueError, match="not JSON compliant"):
        canonical({"a": float("nan")})
