"""Rate limits: a sliding minute per identity, moved by the clock, counting no refusal."""

from __future__ import annotations

from aiohttp import encode_basic_auth
from hypothesis import given
from hypothesis import strategies as st

from bot.serving import RateLimits, SignIn, Throttled
from bot.testing import FixedClock


def test_the_hit_past_the_limit_is_refused_until_its_retry_after() -> None:
    """Three a minute: the fourth waits; after the Retry-After it fits; others never wait."""
    clock = FixedClock()
    rates = RateLimits("test", clock=clock)
    assert [rates.hit("ci", per_minute=3) for _ in range(3)] == [0, 0, 0]
    wait = rates.hit("ci", per_minute=3)
    assert 1 <= wait <= 61  # a minute, and the instant it ends
    assert rates.hit("other", per_minute=3) == 0
    clock.advance(wait - 1)
    assert rates.retry_after("ci", per_minute=3) > 0
    clock.advance(1)
    assert rates.hit("ci", per_minute=3) == 0


def test_a_refused_hit_counts_nothing() -> None:
    """Hammering while refused does not push the wait out: the retry-after only shrinks."""
    clock = FixedClock()
    rates = RateLimits("test", clock=clock)
    rates.hit("ci", per_minute=1)
    wait = rates.hit("ci", per_minute=1)
    for _ in range(100):
        clock.advance(0.1)
        again = rates.hit("ci", per_minute=1)
        assert 0 < again <= wait
        wait = again
    clock.advance(wait)
    assert rates.hit("ci", per_minute=1) == 0


def test_a_steady_caller_gets_the_limit_a_minute() -> None:
    """One hit a second for an hour, ten a minute allowed: ten a minute get through."""
    clock = FixedClock()
    rates = RateLimits("test", clock=clock)
    admitted = 0
    for _ in range(3600):
        admitted += rates.hit("ci", per_minute=10) == 0
        clock.advance(1)
    assert admitted == 600


@given(
    limit=st.integers(1, 8),
    start=st.floats(0, 120),
    gaps=st.lists(st.floats(0, 10), min_size=1, max_size=30),
)
def test_after_its_retry_after_one_more_always_fits(
    limit: int, start: float, gaps: list[float]
) -> None:
    """Hits at any instants: waiting out the Retry-After always leaves room for one."""
    clock = FixedClock(1_800_000_000.0 + start)
    rates = RateLimits("test", clock=clock)
    for gap in gaps:
        rates.hit("ci", per_minute=limit)
        clock.advance(gap)
    clock.advance(rates.retry_after("ci", per_minute=limit))
    assert rates.hit("ci", per_minute=limit) == 0


async def test_failed_sign_ins_from_one_address_are_throttled_there_only() -> None:
    """Five wrong passwords from one address: its next try, even the right one, is refused
    before hashing; another address signs in; after the wait the first may try again."""
    clock = FixedClock()
    sign_in = SignIn({"ana": "ana's password!"}, clock=clock, failures_per_minute=5)
    right = encode_basic_auth("ana", "ana's password!")
    for n in range(5):
        wrong = encode_basic_auth("ana", f"guess {n}")
        assert await sign_in.identify(wrong, client="192.0.2.7") is None
    try:
        await sign_in.identify(right, client="192.0.2.7")
    except Throttled as throttled:
        wait = throttled.retry_after
    else:
        raise AssertionError("the sixth try from the guessing address was checked")
    assert await sign_in.identify(right, client="198.51.100.9") == "ana"
    clock.advance(wait)
    assert await sign_in.identify(right, client="192.0.2.7") == "ana"


async def test_a_remembered_sign_in_is_not_throttled() -> None:
    """Someone signed in from an address a guesser shares stays signed in."""
    sign_in = SignIn({"ana": "ana's password!"}, clock=FixedClock(), failures_per_minute=1)
    right = encode_basic_auth("ana", "ana's password!")
    assert await sign_in.identify(right, client="192.0.2.7") == "ana"
    assert await sign_in.identify(encode_basic_auth("ana", "nope"), client="192.0.2.7") is None
    assert await sign_in.identify(right, client="192.0.2.7") == "ana"
