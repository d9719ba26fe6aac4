"""The retry schedule: a few seconds first, a third attempt within 40 s, more than a day in all."""

from __future__ import annotations

import itertools

import pytest

from bot.webhooks import WebhookError, retry_delay


def _schedule() -> list[float]:
    """When each attempt is sent, in seconds after the first, until the schedule gives up."""
    sent = [0.0]
    for attempt in itertools.count(1):
        delay = retry_delay(attempt)
        if delay is None:
            return sent
        assert attempt < 100, "the schedule never gives up"
        sent.append(sent[-1] + delay)
    raise AssertionError("unreachable")


def test_the_first_retry_comes_after_a_few_seconds() -> None:
    first = retry_delay(1)
    assert first is not None and 1 <= first <= 10


def test_the_third_attempt_is_within_40_seconds_of_the_first() -> None:
    sent = _schedule()
    assert sent[2] < 40


def test_it_keeps_trying_for_more_than_a_day_then_gives_up() -> None:
    sent = _schedule()
    assert sent[-1] > 24 * 3600
    assert sent[-2] <= 24 * 3600  # no attempt more than needed once the day is past
    assert retry_delay(len(sent)) is None


def test_the_delays_never_shrink_and_settle_at_four_hours() -> None:
    sent = _schedule()
    delays = [later - earlier for earlier, later in itertools.pairwise(sent)]
    assert delays == sorted(delays)
    assert max(delays) == 4 * 3600
    assert sent[:8] == [0, 5, 35, 155, 755, 2555, 6155, 13355]


def test_attempts_count_from_one() -> None:
    with pytest.raises(WebhookError, match="from 1"):
        retry_delay(0)
