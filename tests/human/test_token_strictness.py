"""Tokens at least as strict as PyJWT: ``crit``, a future ``nbf``, a future ``iat``.

Each case is signed with the real key (so only the check under test can
refuse it), and a property test runs PyJWT's own ``jwt.decode`` on the
same inputs: whatever it refuses, we refuse too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import jwt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.human.tokens import (
    CLOCK_LEEWAY_SECONDS,
    MintedToken,
    SigningKey,
    TokenClaims,
    TokenError,
    TokenInvalidError,
    TokenSigner,
)
from tests.fuzz_counts import count

SECRET = "s" * 48
SIGNER = TokenSigner([SigningKey("k1", SECRET, SECRET)])
HEADER = {"alg": "HS256", "kid": "k1", "typ": "JWT"}


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def signed(header: dict[str, Any], payload: dict[str, Any]) -> str:
    """A token signed with the bot's own key, header and claims as given."""
    head = _b64(json.dumps(header, separators=(",", ":")).encode())
    body = _b64(json.dumps(payload, separators=(",", ":")).encode())
    mac = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(mac)}"


def claims(now: int, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "jti": "int_" + "a" * 24,
        "sub": "run_" + "b" * 16,
        "iat": now,
        "exp": now + 3_600,
        "scope": "T1:C1",
        "thread": "1700000000.1",
        "checkpoint": "run_x:1",
        "call": "call_" + "c" * 24,
        "name": "ask_user",
        "aud": SIGNER.audience,
        "iss": SIGNER.issuer,
    }
    base.update(changes)
    return base


def ours_accepts(token: str, now: float) -> bool:
    try:
        SIGNER.decode(token, now=now)
    except TokenError:
        return False
    return True


def pyjwt_accepts(token: str) -> bool:
    try:
        jwt.decode(
            token,
            SECRET,
            algorithms=["HS256"],
            audience=SIGNER.audience,
            issuer=SIGNER.issuer,
            leeway=CLOCK_LEEWAY_SECONDS,
        )
    except jwt.PyJWTError:
        return False
    return True


def test_the_plain_token_is_accepted_by_both() -> None:
    now = int(time.time())
    token = signed(HEADER, claims(now))
    assert ours_accepts(token, now) and pyjwt_accepts(token)


@pytest.mark.parametrize(
    "extra",
    [
        {"crit": ["b64"], "b64": False},
        {"crit": ["b64"], "b64": True},
        {"crit": ["exp"]},
        {"crit": []},
        {"crit": "b64"},
    ],
)
def test_a_crit_header_is_refused(extra: dict[str, Any]) -> None:
    """We implement no JWS extension, so any ``crit`` is refused (RFC 7515 4.1.11)."""
    now = int(time.time())
    token = signed({**HEADER, **extra}, claims(now))
    with pytest.raises(TokenInvalidError, match="critical"):
        SIGNER.decode(token, now=now)


@pytest.mark.parametrize(("claim", "refusal"), [("nbf", "not valid yet"), ("iat", "in the future")])
def test_a_future_time_beyond_the_leeway_is_refused_and_within_it_accepted(
    claim: str, refusal: str
) -> None:
    """A future ``nbf`` or ``iat`` a second past the leeway is refused; at the leeway, taken."""
    now = int(time.time())
    late = signed(HEADER, claims(now, **{claim: now + CLOCK_LEEWAY_SECONDS + 1}))
    with pytest.raises(TokenInvalidError, match=refusal):
        SIGNER.decode(late, now=now)
    assert ours_accepts(signed(HEADER, claims(now, **{claim: now + CLOCK_LEEWAY_SECONDS})), now)


def test_an_nbf_that_is_not_a_number_is_refused() -> None:
    """``nbf`` must be a number: a string or a boolean is refused, not read as a time."""
    now = int(time.time())
    assert not ours_accepts(signed(HEADER, claims(now, nbf="soon")), now)
    assert not ours_accepts(signed(HEADER, claims(now, nbf=True)), now)


def test_our_own_tokens_are_unchanged() -> None:
    """What the signer mints still decodes (no ``nbf``: ``iat`` stands for it)."""
    now = int(time.time())
    fields = {k: v for k, v in claims(now).items() if k in TokenClaims.__slots__}
    token = SIGNER.encode(MintedToken(TokenClaims(**fields)))
    assert ours_accepts(token, now) and pyjwt_accepts(token)


_offsets = st.integers(-2 * 86_400, 2 * 86_400) | st.sampled_from(
    [-CLOCK_LEEWAY_SECONDS - 1, -CLOCK_LEEWAY_SECONDS, 0, CLOCK_LEEWAY_SECONDS, 61, 3_600]
)
_header_extras = st.fixed_dictionaries(
    {},
    optional={
        "crit": st.sampled_from([["b64"], ["exp"], [], "b64", [1]]),
        "b64": st.booleans(),
        "typ": st.sampled_from(["JWT", "at+jwt", 7]),
        "cty": st.sampled_from(["JWT", ""]),
    },
)
_time = st.one_of(
    _offsets.map(lambda o: ("offset", o)),
    st.sampled_from([("raw", "1"), ("raw", 1.5), ("raw", None), ("raw", True)]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    extras=_header_extras,
    iat=_time,
    exp=_time,
    nbf=st.none() | _time,
    aud=st.sampled_from([SIGNER.audience, [SIGNER.audience], "other"]),
)
def test_we_never_accept_what_pyjwt_refuses(
    extras: dict[str, Any],
    iat: tuple[str, Any],
    exp: tuple[str, Any],
    nbf: tuple[str, Any] | None,
    aud: Any,
) -> None:
    count("tokens vs PyJWT")
    now = int(time.time())

    def at(spec: tuple[str, Any]) -> Any:
        kind, value = spec
        return now + value if kind == "offset" else value

    payload = claims(now, iat=at(iat), exp=at(exp), aud=aud)
    if nbf is not None:
        payload["nbf"] = at(nbf)
    token = signed({**HEADER, **extras}, payload)
    if not pyjwt_accepts(token):
        assert not ours_accepts(token, now), (extras, payload)
