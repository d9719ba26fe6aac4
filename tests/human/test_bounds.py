"""Bounds on what a registration, a TTL policy and a multi-select answer may say."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.errors import BotError
from bot.human import (
    AnswerValidationError,
    InteractionConfigurationError,
    TTLPolicy,
    ask_user_registration,
)
from bot.interactions.approval import approval_registration
from bot.testing import question

HOUR = timedelta(hours=1)


@pytest.mark.parametrize("ttl", [timedelta(0), timedelta(seconds=-1)], ids=["zero", "negative"])
def test_a_registration_refuses_a_ttl_that_is_not_positive(ttl: timedelta) -> None:
    """A ttl is how long a pause may stay open -- never for no time, or less."""
    with pytest.raises(InteractionConfigurationError, match="positive"):
        approval_registration(ttl=ttl)
    assert approval_registration(ttl=HOUR).ttl == HOUR


@pytest.mark.parametrize("ttl", [timedelta(0), timedelta(seconds=-1)], ids=["zero", "negative"])
def test_a_policy_refuses_an_override_that_is_not_positive(ttl: timedelta) -> None:
    """A ttl is how long a pause may stay open -- a zero override is refused, not skipped."""
    with pytest.raises(BotError, match="'approval'"):
        TTLPolicy(overrides={"approval": ttl})


def test_a_policy_default_may_not_exceed_its_maximum() -> None:
    """A default longer than the ceiling would be cut silently on every pause; refuse it."""
    with pytest.raises(BotError, match="exceeds the maximum"):
        TTLPolicy(default=timedelta(days=8), maximum=timedelta(days=7))
    assert TTLPolicy(default=timedelta(days=7), maximum=timedelta(days=7)).default == timedelta(
        days=7
    )


def test_for_interaction_prefers_override_then_registration_then_default_capped() -> None:
    """Precedence is decided by presence (is not None), and the maximum caps all three."""
    policy = TTLPolicy(
        default=2 * HOUR, maximum=10 * HOUR, overrides={"approval": 3 * HOUR, "long": 99 * HOUR}
    )
    assert policy.for_interaction("approval", 5 * HOUR) == 3 * HOUR
    assert policy.for_interaction("ask_user", 5 * HOUR) == 5 * HOUR
    assert policy.for_interaction("ask_user") == 2 * HOUR
    assert policy.for_interaction("long") == 10 * HOUR
    assert policy.for_interaction("ask_user", 50 * HOUR) == 10 * HOUR


def test_a_zero_registered_ttl_is_refused_rather_than_replaced_by_the_default() -> None:
    """With `or`, a zero TTL silently became the default; now it is named and refused."""
    with pytest.raises(BotError, match="'ask_user'"):
        TTLPolicy().for_interaction("ask_user", timedelta(0))


MULTI = {"questions": [question("Which regions?", "eu", "us", "ap", multi_select=True)]}


@pytest.mark.parametrize(
    ("chosen", "message"),
    [
        (["eu", "eu"], "once"),
        (["eu", "us", "eu"], "once"),
        (["eu", "us", "ap", "eu"], "at most 3"),
        (["eu"] * 10_000, "at most 3"),
    ],
    ids=["a duplicate", "a duplicate among others", "more than offered", "ten thousand"],
)
def test_multi_select_refuses_duplicates_and_more_than_the_options(
    chosen: list[str], message: str
) -> None:
    """A multi-select answer names each offered option at most once."""
    registration = ask_user_registration()
    payload = registration.validate_payload(MULTI)
    with pytest.raises(AnswerValidationError, match=message):
        registration.validate_answer({"answers": {"Which regions?": chosen}}, payload)


def test_multi_select_accepts_any_distinct_subset_of_the_options() -> None:
    """All three options, or one as a bare string, are fine."""
    registration = ask_user_registration()
    payload = registration.validate_payload(MULTI)
    every = {"answers": {"Which regions?": ["ap", "eu", "us"]}}
    assert registration.validate_answer(every, payload) == every
    single = {"answers": {"Which regions?": "us"}}
    assert registration.validate_answer(single, payload) == single
