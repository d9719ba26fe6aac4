"""One canonical identity per person: each spelling is the one id, or refused saying how."""

from __future__ import annotations

import pytest

from bot.client.identity import IdentityError, canonical, compared, names, person_of

ALICE = "slack:T0TEST:U0ALICE"


@pytest.mark.parametrize(
    ("spelt", "one"),
    [
        (" U0ALICE", "U0ALICE"),
        ("U0ALICE ", "U0ALICE"),
        ("\tU0ALICE\n", "U0ALICE"),
        ("slack:t0test:u0alice", ALICE),
        ("SLACK:T0TEST:U0ALICE", ALICE),
        ("Slack:T0TEST:u0alice", ALICE),
        (
            "teams:72F988BF-86F1-41AF-91AB-2D7CD011DB47:6B0F1E9A-0000-4000-8000-00000000ABCD",
            "teams:72f988bf-86f1-41af-91ab-2d7cd011db47:6b0f1e9a-0000-4000-8000-00000000abcd",
        ),
        ("Email:Ana@Example.COM", "email:ana@example.com"),
        ("console:ana", "console:ana"),
        ("group:s0ops", "group:S0OPS"),
        ("S0OPS", "S0OPS"),
        ("Anyone", "anyone"),
    ],
)
def test_each_spelling_of_one_id_is_that_id(spelt: str, one: str) -> None:
    """Case, surrounding spaces and the surface's prefix spelling make no second identity."""
    assert canonical(spelt) == one
    assert canonical(one) == one


@pytest.mark.parametrize(
    ("spelt", "words"),
    [
        ("u0alice", "Slack ids are uppercase; write U0ALICE"),
        ("U0ALICE\u200b", "not plain ASCII"),
        ("\uff350ALICE", "not plain ASCII"),
        ("<@U0ALICE>", "Slack mention, not an id; write U0ALICE or slack:<team>:U0ALICE"),
        ("<@U0ALICE|alice>", "Slack mention"),
        ("U0 ALICE", "not plain ASCII"),
        ("alice", "write a person as slack:<team>:<user>"),
        ("slack:T0TEST", "not an id the bridge knows"),
        ("slack:T0TEST:U0-ALICE", "not an id the bridge knows"),
        ("myspace:alice", "not an id the bridge knows"),
        ("email:ana", "not an id the bridge knows"),
        ("   ", "not plain ASCII"),
    ],
)
def test_an_id_without_one_spelling_is_refused_saying_how_to_write_it(
    spelt: str, words: str
) -> None:
    """Invisible, look-alike and lowercase bare ids are refused, not guessed at."""
    with pytest.raises(IdentityError) as refused:
        canonical(spelt)
    assert words in str(refused.value)


def test_a_bare_slack_id_names_that_user_in_any_workspace() -> None:
    """``U0ALICE`` names slack:<any team>:U0ALICE, and no one on another surface."""
    assert names(ALICE, "U0ALICE") and names("slack:T0OTHER:U0ALICE", "U0ALICE")
    assert not names("console:U0ALICE", "U0ALICE") and not names(ALICE, "U0BOB")
    assert person_of("U0ALICE") == person_of(ALICE) == "U0ALICE"


def test_a_stored_spelling_compares_as_its_canonical_id() -> None:
    """Ids stored before canonicalizing (lowercase, spaced) still name the person."""
    assert compared("u0alice") == "U0ALICE" and names(ALICE, " u0alice")
    assert names(ALICE, "slack:t0test:u0alice") and names("test:dan", "test:dan")
