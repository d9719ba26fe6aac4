"""Resume tokens: JWTs bound to one pause, signed with rotating keys.

The first configured key signs; every configured key verifies, so adding a
key in front and retiring the old one later never breaks an open pause.
Decoding names its algorithm per key, so ``alg: none`` and algorithm
confusion are refused by construction rather than by a check we might forget.

PyJWT's algorithms sign and verify, each key prepared once. ``jwt.encode``
and ``jwt.decode`` are not used: they prepare the key again on every call
(trying it as JSON, PEM and DER), and the decode checks every character of
the token in Python, which made it about 90 us of the 640 us of CPU a Slack
click cost the server. What they add around the signature is done here:
the compact form (``header.payload.signature``, base64url without padding,
the header ``{"alg", "kid", "typ"}``), and on the way in the canonical
spelling of each segment (stricter than PyJWT's), the key's own algorithm,
audience, issuer and every claim with its type. The tokens are standard
JWTs: ``jwt.decode`` reads them (a test proves it).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jwt

from bot.component_settings import parse_key_list
from bot.errors import BotError

MAX_TOKEN_CHARS = 1000
"""Tokens ride in Slack button values (2,000) and modal metadata (3,000)."""

MIN_SECRET_CHARS = 32
DEFAULT_ISSUER = "chatops-bridge"
DEFAULT_AUDIENCE = "chatops-bridge/resume"
CLOCK_LEEWAY_SECONDS = 60
"""How far in the future an ``iat`` or ``nbf`` may be (clock skew between replicas)."""


class TokenError(BotError):
    """A token was refused; nothing was spent."""


class TokenInvalidError(TokenError):
    """Forged, tampered, truncated, unknown key, wrong audience or not a token."""


class TokenExpiredError(TokenError):
    """Signed by us, but past its expiry."""


class SigningConfigError(BotError):
    """The signing keys are unusable; the message names the setting to fix."""


@dataclass(frozen=True, slots=True)
class TokenClaims:
    """What a token says: which pause, which run, where, until when."""

    jti: str  # interrupt id
    sub: str  # run id
    iat: int
    exp: int
    scope: str
    thread: str
    checkpoint: str
    call: str  # the reserved tool call id the answer joins on
    name: str  # interaction name
    aud: str = DEFAULT_AUDIENCE
    iss: str = DEFAULT_ISSUER
    # The digest of the arguments an approval asked about (``arguments_digest``); "" when
    # the question has none. An answer's edit is measured against these very arguments.
    args: str = ""


# Claims a token carries only when they have a value: a token minted before one existed
# still reads, as the claim's default.
_OPTIONAL_CLAIMS = frozenset({"args"})


def arguments_digest(arguments: Any) -> str:
    """A short digest of ``arguments`` as canonical JSON, the ``args`` claim."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _base64url(hashlib.sha256(text.encode()).digest()[:16])


@dataclass(frozen=True, slots=True)
class MintedToken:
    """A signed-to-be envelope; ``encode`` renders it as the opaque string."""

    claims: TokenClaims


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One key by id. HS256 uses one secret for both; asymmetric keys differ."""

    kid: str
    signing: Any
    verifying: Any
    algorithm: str = "HS256"

    def __repr__(self) -> str:  # never print key material
        return f"SigningKey(kid={self.kid!r}, algorithm={self.algorithm!r})"


def parse_signing_keys(text: str) -> tuple[SigningKey, ...]:
    """Parse ``kid:secret,kid:secret``; the first key signs."""
    return tuple(parse_key_list(text, "BOT_SIGNING_KEYS", SigningConfigError, _signing_key))


def _signing_key(kid: str, secret: str) -> SigningKey:
    if len(secret) < MIN_SECRET_CHARS:
        raise SigningConfigError(
            f"BOT_SIGNING_KEYS key {kid!r} is shorter than {MIN_SECRET_CHARS} characters; "
            "generate one with `python -m bot keygen`."
        )
    return SigningKey(kid, secret, secret)


def random_signing_key(kid: str | None = None) -> SigningKey:
    secret = secrets.token_urlsafe(48)
    return SigningKey(kid or f"k{secrets.token_hex(4)}", secret, secret)


class TokenSigner:
    """Mints, encodes and decodes resume tokens."""

    def __init__(
        self,
        keys: Sequence[SigningKey],
        *,
        issuer: str = DEFAULT_ISSUER,
        audience: str = DEFAULT_AUDIENCE,
    ) -> None:
        if not keys:
            raise SigningConfigError("a token signer needs at least one key.")
        self._signing = _PreparedKey.of(keys[0], signs=True)
        self._by_kid = {key.kid: _PreparedKey.of(key) for key in keys}
        self.issuer = issuer
        self.audience = audience

    def mint(self, claims: TokenClaims) -> MintedToken:
        return MintedToken(claims)

    def encode(self, minted: MintedToken) -> str:
        # The signer owns audience and issuer, whatever the envelope says.
        claims = minted.claims
        payload = {
            name: getattr(claims, name)
            for name in TokenClaims.__slots__
            if name not in _OPTIONAL_CLAIMS or getattr(claims, name)
        }
        payload |= {"aud": self.audience, "iss": self.issuer}
        key = self._signing
        header = {"alg": key.algorithm, "kid": key.kid, "typ": "JWT"}
        signed = f"{_segment(header)}.{_segment(payload)}"
        token = f"{signed}.{_base64url(key.sign(signed.encode('ascii')))}"
        if len(token) >= MAX_TOKEN_CHARS:
            raise TokenError(
                f"a resume token came out {len(token)} characters long; shorten the ids "
                f"bound into it (the limit is {MAX_TOKEN_CHARS})."
            )
        return token

    def decoder(self, clock: Callable[[], float]) -> Callable[[str], TokenClaims]:
        """``decode`` at ``clock()``'s time: the one-argument decoder a capability takes."""

        def decode(token: str) -> TokenClaims:
            return self.decode(token, now=clock())

        return decode

    def decode(self, token: str, *, now: float) -> TokenClaims:
        """Verify everything but the clock-free parts first, then expiry against ``now``."""
        if not isinstance(token, str) or not token or len(token) >= MAX_TOKEN_CHARS:
            raise TokenInvalidError("not a resume token")
        header, payload, signature = _require_canonical(token)
        head = _json_object(header)
        key = self._by_kid.get(str(head.get("kid", "")))
        if key is None:
            raise TokenInvalidError("signed by a key this bot does not hold")
        # The key decides the algorithm; a header naming another, or none, is refused.
        if head.get("alg") != key.algorithm:
            raise TokenInvalidError("signed with an algorithm its key does not use")
        # We understand no extension; RFC 7515 says a token naming one in ``crit``
        # (``b64: false`` changes what was signed) must be refused, as PyJWT does.
        if "crit" in head:
            raise TokenInvalidError("the header names critical extensions")
        # Our header is exactly these; any other parameter is not a token we minted.
        if not head.keys() <= _HEADER_KEYS:
            raise TokenInvalidError("the header carries parameters we never set")
        if not key.verify(f"{header}.{payload}".encode("ascii"), _unpadded(signature)):
            raise TokenInvalidError("the signature does not check out")
        data = _json_object(payload)
        if data.get("aud") != self.audience or data.get("iss") != self.issuer:
            raise TokenInvalidError("issued for another audience or by another issuer")
        try:
            # Every claim is required; time claims are checked below, against ``now``.
            claims = TokenClaims(
                **{k: data[k] for k in TokenClaims.__slots__ if k not in _OPTIONAL_CLAIMS},
                **{k: data[k] for k in _OPTIONAL_CLAIMS if k in data},
            )
        except KeyError as error:
            raise TokenInvalidError(f"the {error.args[0]!r} claim is missing") from error
        _require_claim_types(claims)
        nbf = data.get("nbf", claims.iat)
        if not isinstance(nbf, int) or isinstance(nbf, bool):
            raise TokenInvalidError("the 'nbf' claim has the wrong type")
        # Beyond the leeway, a token from the future was not minted by our clock.
        if claims.iat > now + CLOCK_LEEWAY_SECONDS:
            raise TokenInvalidError("the token was issued in the future")
        if nbf > now + CLOCK_LEEWAY_SECONDS:
            raise TokenInvalidError("the token is not valid yet")
        if claims.exp <= now:
            raise TokenExpiredError("the token is past its expiry")
        return claims


_SEGMENT = re.compile(r"[A-Za-z0-9_-]*")
_INT_CLAIMS = ("iat", "exp")
_HEADER_KEYS = frozenset({"alg", "kid", "typ"})


@dataclass(frozen=True, slots=True)
class _PreparedKey:
    """A key with its algorithm (PyJWT's), prepared once rather than on every token."""

    kid: str
    algorithm: str
    scheme: Any
    verifying: Any
    signing: Any = None

    @classmethod
    def of(cls, key: SigningKey, *, signs: bool = False) -> _PreparedKey:
        try:
            scheme = jwt.get_algorithm_by_name(key.algorithm)
            signing = scheme.prepare_key(key.signing) if signs else None
            return cls(key.kid, key.algorithm, scheme, scheme.prepare_key(key.verifying), signing)
        except (NotImplementedError, jwt.InvalidKeyError) as error:
            raise SigningConfigError(
                f"signing key {key.kid!r} cannot be used for {key.algorithm}: {error}"
            ) from error

    def sign(self, message: bytes) -> bytes:
        return bytes(self.scheme.sign(message, self.signing))

    def verify(self, message: bytes, signature: bytes) -> bool:
        return bool(self.scheme.verify(message, self.verifying, signature))


def _segment(value: dict[str, Any]) -> str:
    return _base64url(json.dumps(value, separators=(",", ":")).encode())


def _base64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _require_canonical(token: str) -> tuple[str, str, str]:
    """Refuse any spelling but the one base64url encoding of each segment.

    The last character of a segment can carry unused bits, and Python's
    decoder skips characters outside the alphabet, so two different strings
    can decode to one signature. Only the canonical one is the token we
    issued; the others would be a second spelling of a single-use token.
    """
    segments = token.split(".")
    if len(segments) != 3 or not all(_SEGMENT.fullmatch(segment) for segment in segments):
        raise TokenInvalidError("not a resume token")
    header, payload, signature = segments
    if _base64url(_unpadded(signature)) != signature:
        raise TokenInvalidError("the signature is not canonical base64url")
    return header, payload, signature


def _unpadded(segment: str) -> bytes:
    """The bytes of a base64url segment without its padding (checked against the alphabet)."""
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError) as error:
        raise TokenInvalidError("not a resume token") from error


def _json_object(segment: str) -> dict[str, Any]:
    try:
        value = json.loads(_unpadded(segment))
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError too
        raise TokenInvalidError("not a resume token") from error
    if not isinstance(value, dict):
        raise TokenInvalidError("not a resume token")
    return value


def _require_claim_types(claims: TokenClaims) -> None:
    """A claim of the wrong type is a malformed token, not a crash further on."""
    for name in TokenClaims.__slots__:
        value = getattr(claims, name)
        wanted = int if name in _INT_CLAIMS else str
        # bool is an int to Python, never a time to us.
        if not isinstance(value, wanted) or isinstance(value, bool):
            raise TokenInvalidError(f"the {name!r} claim has the wrong type")
