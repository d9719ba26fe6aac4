"""Resume tokens: every bad token is a typed refusal; good ones round-trip and rotate."""

from __future__ import annotations

import base64
import dataclasses
import warnings

import jwt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.human.tokens import (
    MAX_TOKEN_CHARS,
    MintedToken,
    SigningConfigError,
    SigningKey,
    TokenClaims,
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


def claims(**changes: object) -> TokenClaims:
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
    return TokenClaims(**base)  # type: ignore[arg-type]


SIGNER = TokenSigner([KEY])
GOOD = SIGNER.encode(MintedToken(claims()))


def test_a_token_round_trips_and_stays_under_the_slack_limit() -> None:
    """Encoded tokens decode to the same claims and are under 1,000 characters."""
    assert SIGNER.decode(GOOD, now=NOW) == claims()
    long_ids = claims(scope="E" + "9" * 40, thread="x" * 60, checkpoint="y" * 60)
    assert len(SIGNER.encode(MintedToken(long_ids))) < MAX_TOKEN_CHARS


def test_a_token_is_a_standard_jwt() -> None:
    """PyJWT's own decode reads it: the compact form, header and claims are the standard ones."""
    data = jwt.decode(
        GOOD,
        SECRET,
        algorithms=["HS256"],
        audience=SIGNER.audience,
        issuer=SIGNER.issuer,
        options={"verify_iat": False},  # issued at NOW, which is later than today
    )
    assert data["jti"] == claims().jti
    assert jwt.get_unverified_header(GOOD) == {"alg": "HS256", "kid": "k1", "typ": "JWT"}


def test_an_expired_token_is_refused_as_expired() -> None:
    """At or past exp the token is TokenExpiredError, not merely invalid."""
    with pytest.raises(TokenExpiredError):
        SIGNER.decode(GOOD, now=NOW + 86_400)


def _signed_with(algorithm: str) -> str:
    payload = {**dataclasses.asdict(claims()), "aud": SIGNER.audience, "iss": SIGNER.issuer}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyJWT warns that 48 characters are short for HS512
        return jwt.encode(payload, SECRET, algorithm=algorithm, headers={"kid": "k1"})


BAD_TOKENS = {
    **forgeries(GOOD),
    "wrong audience": TokenSigner([KEY], audience="someone-else").encode(MintedToken(claims())),
    "wrong issuer": TokenSigner([KEY], issuer="someone-else").encode(MintedToken(claims())),
    "empty": "",
    "not base64": "!!!.???.***",
    # Signed with the right secret, but under an algorithm the key does not name.
    "another algorithm": _signed_with("HS512"),
    "payload a list": jwt.api_jws.encode(
        b"[1, 2]", SECRET, algorithm="HS256", headers={"kid": "k1"}
    ),
    "claim of the wrong type": SIGNER.encode(MintedToken(claims(exp="tomorrow"))),
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
    # Including a last character that decodes to the same signature bytes:
    # only the canonical spelling is the token that was issued.
    with pytest.raises(TokenInvalidError):
        SIGNER.decode(mutated, now=NOW)


def _non_canonical_spellings(token: str) -> list[str]:
    """The same signature bytes with different spare bits in the last character."""
    head, signature = token.rsplit(".", 1)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    spare = (1 << (6 * len(signature) % 8)) - 1  # the bits past the last whole byte
    index = alphabet.index(signature[-1])
    return [
        f"{head}.{signature[:-1]}{alphabet[(index & ~spare) | bits]}"
        for bits in range(1, spare + 1)
    ]


def test_only_the_canonical_base64url_signature_is_accepted() -> None:
    """A signature whose last character differs only in unused bits is refused."""
    spellings = _non_canonical_spellings(GOOD)
    assert spellings, "an HS256 signature has spare bits in its last character"
    signature = GOOD.rsplit(".", 1)[1]
    for spelling in spellings:
        assert spelling != GOOD
        assert base64.urlsafe_b64decode(spelling.rsplit(".", 1)[1] + "=") == (
            base64.urlsafe_b64decode(signature + "=")
        )
        with pytest.raises(TokenInvalidError, match="canonical"):
            SIGNER.decode(spelling, now=NOW)
    assert SIGNER.decode(GOOD, now=NOW) == claims()


def test_characters_outside_base64url_are_refused_even_where_decoders_skip_them() -> None:
    """Python's base64 decoder drops stray characters; the token reader does not."""
    head, signature = GOOD.rsplit(".", 1)
    for stray in ("=", "+", "/", " ", "\n"):
        with pytest.raises(TokenInvalidError):
            SIGNER.decode(f"{head}.{signature[:10]}{stray}{signature[10:]}", now=NOW)


def _signed(**changes: object) -> str:
    data: dict[str, object] = {
        **dataclasses.asdict(claims()),
        "aud": SIGNER.audience,
        "iss": SIGNER.issuer,
    }
    data.update(changes)
    return jwt.encode(data, SECRET, algorithm="HS256", headers={"kid": "k1"})


WRONG_TYPES = {
    "exp as a string": {"exp": str(int(NOW) + 60)},
    "exp as a float": {"exp": NOW + 60.5},
    "exp as true": {"exp": True},
    "iat as a string": {"iat": "yesterday"},
    "jti as a number": {"jti": 12345},
    "sub as null": {"sub": None},
    "scope as a list": {"scope": ["T0123456789"]},
    "call as an object": {"call": {"id": "call_1"}},
    "name as a number": {"name": 7},
}


@pytest.mark.parametrize("changes", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
def test_a_claim_of_the_wrong_type_is_invalid_not_a_crash(changes: dict[str, object]) -> None:
    """Correctly signed, but a claim has the wrong type: TokenInvalidError, nothing else."""
    with pytest.raises(TokenInvalidError):
        SIGNER.decode(_signed(**changes), now=NOW)


@settings(max_examples=200)
@given(st.text(max_size=2_000))
def test_arbitrary_text_is_refused_without_crashing(text: str) -> None:
    """No string of text makes decode raise anything but a typed refusal."""
    with pytest.raises(TokenInvalidError):
        SIGNER.decode(text, now=NOW)


def test_keys_rotate_without_breaking_open_pauses() -> None:
    """A token signed by the old key verifies once a new key signs in front of it."""
    old = TokenSigner([KEY]).encode(MintedToken(claims()))
    rotated = TokenSigner([random_signing_key("k2"), KEY])
    assert rotated.decode(old, now=NOW) == claims()
    assert jwt.get_unverified_header(rotated.encode(MintedToken(claims())))["kid"] == "k2"


def test_signing_keys_parse_and_refuse_weak_or_malformed_input() -> None:
    """kid:secret pairs parse in order; short secrets, duplicates and junk are refused."""
    keys = parse_signing_keys(f"new:{'n' * 40}, old:{'o' * 40}")
    assert [k.kid for k in keys] == ["new", "old"]
    for bad in ("k1:short", "no-colon", f"a:{'x' * 40},a:{'y' * 40}", " , "):
        with pytest.raises(SigningConfigError):
            parse_signing_keys(bad)
    assert SECRET not in repr(keys[0]) and "n" * 40 not in repr(keys[0])
