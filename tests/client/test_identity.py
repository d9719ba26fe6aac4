"""One canonical identity per person: each spelling is the one id, or refused saying how."""

from __future__ import annotations

import pytest

from bot.contract.identity import IdentityError, canonical, compared, person_of, same_person

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
        ("email:ana", "not one plain email address"),
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
    assert same_person(ALICE, "U0ALICE") and same_person("slack:T0OTHER:U0ALICE", "U0ALICE")
    assert not same_person("console:U0ALICE", "U0ALICE") and not same_person(ALICE, "U0BOB")
    assert person_of("U0ALICE") == person_of(ALICE) == "U0ALICE"


def test_a_slack_user_is_one_person_in_every_workspace() -> None:
    """The same Slack user id in another workspace is the same person; another user is not."""
    assert same_person("slack:T0OTHER:U0ALICE", ALICE)
    assert same_person("slack:T0OTHER:W0ALICE", "slack:T0TEST:W0ALICE")
    assert not same_person("slack:T0OTHER:U0BOB", ALICE)
    assert not same_person("teams:t:U0ALICE", ALICE) and not same_person("", "")


def test_a_stored_spelling_compares_as_its_canonical_id() -> None:
    """Ids stored before canonicalizing (lowercase, spaced) still name the person."""
    assert compared("u0alice") == "U0ALICE" and same_person(ALICE, " u0alice")
    assert same_person(ALICE, "slack:t0test:u0alice") and same_person("test:dan", "test:dan")


TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
AAD = "6b0f1e9a-4c2d-4e1f-8a3b-5d6e7f809a1b"


@pytest.mark.parametrize(
    ("spelt", "one"),
    [
        ("email:ana@example.com", "email:ana@example.com"),
        ("email:Ana.Lopez+ops@Mail.Example.co.uk", "email:ana.lopez+ops@mail.example.co.uk"),
        ("email:o'brien@example.com", "email:o'brien@example.com"),
        ("email:ops-team_1@xn--bcher-kva.example", "email:ops-team_1@xn--bcher-kva.example"),
        (f"teams:{TENANT}:{AAD}", f"teams:{TENANT}:{AAD}"),
        (f"Teams:{TENANT.upper()}:{AAD.upper()}", f"teams:{TENANT}:{AAD}"),
    ],
)
def test_a_plain_address_and_a_teams_guid_pair_are_accepted(spelt: str, one: str) -> None:
    """A plain local@domain and Teams' dashed GUIDs are ids; an uppercase GUID is lowercased."""
    assert canonical(spelt) == one


@pytest.mark.parametrize(
    "spelt",
    [
        "email:<ana@example.com>",
        'email:"ana"@example.com',
        "email:ana(x)@example.com",
        "email:mailto:ana@example.com",
        "email:ana@example.com\\",
        "email:ana@example.com,eve@evil.example",
        "email:ana@example.com;eve@evil.example",
        "email:Ana<ana@example.com>",
        "email:ana@example.com.",
        "email:ana@example..com",
        "email:ana..b@example.com",
        "email:.ana@example.com",
        "email:ana.@example.com",
        "email:ana@@example.com",
        "email:ana@-example.com",
        "email:ana@example-.com",
        "email:ana@localhost",
        "email:ana@10.0.0.1",
        "email:ana@[10.0.0.1]",
        "email:@example.com",
        "email:ana@" + "a" * 64 + ".com",
        "email:" + "a" * 65 + "@example.com",
    ],
)
def test_an_email_id_that_is_not_one_plain_address_is_refused(spelt: str) -> None:
    """Quotes, comments, brackets, mailto:, lists, stray dots and bad domains name no one:
    each would mail the same inbox (or several) as some other person, or none at all."""
    with pytest.raises(IdentityError) as refused:
        canonical(spelt)
    assert "is not one plain email address; write email: and one plain address" in str(
        refused.value
    )
    assert "such as email:ana@example.com" in str(refused.value)


@pytest.mark.parametrize(
    "spelt", ["email:Ana <ana@example.com>", "email:ana @example.com", "email:ana@exa mple.com"]
)
def test_an_email_id_with_a_space_is_refused(spelt: str) -> None:
    """A display name or a space inside an address is refused with the sentence for spaces."""
    with pytest.raises(IdentityError, match="holds a space"):
        canonical(spelt)


@pytest.mark.parametrize(
    "spelt",
    [
        f"teams:{{{TENANT}}}:{AAD}",
        f"teams:{TENANT}:{{{AAD}}}",
        f"teams:{TENANT}:{AAD.replace('-', '')}",
        f"teams:{TENANT}:{AAD}:x",
        f"teams:contoso:{AAD}",
        f"teams:contoso.onmicrosoft.com:{AAD}",
        f"teams:{TENANT}:aad-alice",
        f"teams:{TENANT}:id:29:1abc",
        f"teams:{TENANT}",
        f"teams:{TENANT}:{AAD[:-1]}g",
    ],
)
def test_a_teams_id_no_click_can_carry_is_refused(spelt: str) -> None:
    """Braces, no dashes, a suffix, a tenant or a user that is not a GUID: refused, saying how."""
    with pytest.raises(IdentityError) as refused:
        canonical(spelt)
    assert "is not a Teams user id; write teams:<tenant id>:<aad object id>" in str(refused.value)
