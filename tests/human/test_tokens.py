"""Resume tokens: every bad token is a typed refusal; good ones round-trip and rotate."""

from __future__ import annotations

import jwt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.human.tokens import (
    MAX_TOKEN_CHARS,
    MintedPause,
    PauseClaims,
    SigningConfigError,
    SigningKey,
    TokenExpiredError,
    TokenInvalidError,
    TokenSigner,
    parse_signing_keys,
    random_signing_key,
)
from tests.support import forgeries

NOW = 1_800_000_000.0
SECRET = "s" * 48
KEY = SigningKey("k1", SECRET, SECRET)


def claims(**changes: object) -> PauseClaims:
    base = dict(
        jti="int_" + "a" * 24,
        sub="run_" + "b" * 16,
        iat=int(NOW),
        exp=int(NOW) + 86_400,
        scope="T0123456789",
        thread="1700000000.123456",
        checkpoint="run_" + "b" * 16 + ":12",
        call="call_" + "c" * 24,
        name="ask_user",
    )
    base.update(changes)
    return PauseClaims(**base)  # type: ignore[arg-type]


SIGNER = TokenSigner([KEY])
GOOD = SIGNER.encode(MintedPause(claims()))


def test_a_token_round_trips_and_stays_under_the_slack_limit() -> None:
    """Encoded tokens decode to the same claims and are under 1,000 characters."""
    assert SIGNER.decode(GOOD, now=NOW) == claims()
    long_ids = claims(scope="E" + "9" * 40, thread="x" * 60, checkpoint="y" * 60)
    assert len(SIGNER.encode(MintedPause(long_ids))) < MAX_TOKEN_CHARS


def test_an_expired_token_is_refused_as_expired() -> None:
    """At or past exp the token is TokenExpiredError, not merely invalid."""
    with pytest.raises(TokenExpiredError):
        SIGNER.decode(GOOD, now=NOW + 86_400)


BAD_TOKENS = {
    **forgeries(GOOD),
    "wrong audience": TokenSigner([KEY], audience="someone-else").encode(MintedPause(claims())),
    "wrong issuer": TokenSigner([KEY], issuer="someone-else").encode(MintedPause(claims())),
    "empty": "",
    "not base64": "!!!.???.***",
}


@pytest.mark.parametrize("token", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
def test_bad_tokens_are_refused_as_invalid(token: str) -> None:
    """Forged, tampered, alg:none, unknown kid, truncated and garbage: TokenInvalidError."""
    with pytest.raises(TokenInvalidError):
        SIGNER.decode(token, now=NOW)


def test_a_token_missing_a_required_claim_is_invalid() -> None:
    """A correctly signed JWT without our claims is still not a resume token."""
    bare = jwt.encode(
        {"sub": "x", "aud": SIGNER.audience, "iss": SIGNER.issuer, "exp": int(NOW) + 60},
        SECRET,
        algorithm="HS256",
        headers={"kid": "k1"},
    )
    with pytest.raises(TokenInvalidError):
        SIGNER.decode(bare, now=NOW)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    position=st.integers(min_value=0, max_value=len(GOOD) - 1),
    replacement=st.characters(codec="ascii", exclude_characters="\x00"),
)
def test_any_single_character_change_is_refused(position: int, replacement: str) -> None:
    """Mutating any one character of a valid token never yields a token that verifies."""
    mutated = GOOD[:position] + replacement + GOOD[position + 1 :]
    if mutated == GOOD:
        return
    try:
        decoded = SIGNER.decode(mutated, now=NOW)
    except TokenInvalidError:
        return
    # base64url has slack in its last character: a change that decodes to
    # the same bytes is the same token, not a forgery.
    assert decoded == claims()


@settings(max_examples=200)
@given(st.text(max_size=2_000))
def test_arbitrary_text_is_refused_without_crashing(text: str) -> None:
    """No string of text makes decode raise anything but a typed refusal."""
    with pytest.raises(TokenInvalidError):
        SIGNER.decode(text, now=NOW)


def test_keys_rotate_without_breaking_open_pauses() -> None:
    """A token signed by the old key verifies once a new key signs in front of it."""
    old = TokenSigner([KEY]).encode(MintedPause(claims()))
    rotated = TokenSigner([random_signing_key("k2"), KEY])
    assert rotated.decode(old, now=NOW) == claims()
    assert jwt.get_unverified_header(rotated.encode(MintedPause(claims())))["kid"] == "k2"


def test_signing_keys_parse_and_refuse_weak_or_malformed_input() -> None:
    """kid:secret pairs parse in order; short secrets, duplicates and junk are refused."""
    keys = parse_signing_keys(f"new:{'n' * 40}, old:{'o' * 40}")
    assert [k.kid for k in keys] == ["new", "old"]
    for bad in ("k1:short", "no-colon", f"a:{'x' * 40},a:{'y' * 40}", " , "):
        with pytest.raises(SigningConfigError):
            parse_signing_keys(bad)
    assert SECRET not in repr(keys[0]) and "n" * 40 not in repr(keys[0])
