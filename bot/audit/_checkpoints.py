"""Signed checkpoints: the heads of the chains that moved, signed with Ed25519.

The bridge's signing keys (``BOT_SIGNING_KEYS``, the ones tokens use) are
shared secrets; a checkpoint must be checkable by someone who may not mint
tokens. So each key's Ed25519 key pair is derived from its secret (HKDF,
its own label), under the same key id: the first key signs, and a
checkpoint signed before a rotation still verifies while the old key (or
its public half, ``python -m bot audit public-key``) is given.

Each checkpoint names the previous one's hash, so checkpoints form a chain
of their own, and lists ``[chain, seq, hash]`` for every chain that moved
since the previous checkpoint.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from bot.audit._chain import canonical
from bot.errors import BotError

_LABEL = b"chatops-bot audit checkpoint ed25519"


class AuditKeyError(BotError, ValueError):
    """A public key given to the verifier is not ``kid:base64``."""


@dataclass(frozen=True, slots=True)
class CheckpointKey:
    """One signing key's Ed25519 pair, under the signing key's id."""

    kid: str
    private: Ed25519PrivateKey

    def __repr__(self) -> str:  # never print key material
        return f"CheckpointKey(kid={self.kid!r})"

    @classmethod
    def derived(cls, kid: str, secret: str) -> CheckpointKey:
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_LABEL).derive(
            secret.encode()
        )
        return cls(kid, Ed25519PrivateKey.from_private_bytes(seed))

    def public_text(self) -> str:
        """``kid:base64url`` of the public key, as ``--public-key`` takes it."""
        raw = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return f"{self.kid}:{base64.urlsafe_b64encode(raw).decode().rstrip('=')}"


def checkpoint_keys(secrets: Sequence[tuple[str, str]]) -> tuple[CheckpointKey, ...]:
    """``(kid, secret)`` pairs as checkpoint keys, in order: the first signs."""
    return tuple(CheckpointKey.derived(kid, secret) for kid, secret in secrets)


def public_keys(keys: Sequence[CheckpointKey]) -> dict[str, Ed25519PublicKey]:
    return {key.kid: key.private.public_key() for key in keys}


def parse_public_keys(texts: Sequence[str]) -> dict[str, Ed25519PublicKey]:
    """``kid:base64url`` items (each may hold several, comma-separated)."""
    found: dict[str, Ed25519PublicKey] = {}
    for item in (part.strip() for text in texts for part in text.split(",")):
        if not item:
            continue
        kid, _, encoded = item.partition(":")
        try:
            raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            found[kid] = Ed25519PublicKey.from_public_bytes(raw)
        except ValueError:
            raise AuditKeyError(
                f"--public-key {kid or item!r} is not kid:base64 of a 32-byte Ed25519 key; "
                "print it with `python -m bot audit public-key`"
            ) from None
        if not kid:
            raise AuditKeyError("--public-key needs its key id: kid:base64")
    return found


def checkpoint_hash(checkpoint: Mapping[str, Any]) -> str:
    """What the next checkpoint names as ``prev``: the whole line, signature included."""
    return hashlib.sha256(canonical(dict(checkpoint))).hexdigest()


def _signed_part(checkpoint: Mapping[str, Any]) -> bytes:
    return canonical({k: v for k, v in checkpoint.items() if k != "signature"})


def sign_checkpoint(
    key: CheckpointKey, *, seq: int, at: float, prev: str, heads: Sequence[Sequence[Any]]
) -> dict[str, Any]:
    """The checkpoint line, signed."""
    body: dict[str, Any] = {
        "type": "checkpoint",
        "seq": seq,
        "at": at,
        "prev": prev,
        "heads": [list(head) for head in heads],
        "kid": key.kid,
    }
    signature = key.private.sign(_signed_part(body))
    body["signature"] = base64.urlsafe_b64encode(signature).decode().rstrip("=")
    return body


def signature_problem(
    checkpoint: Mapping[str, Any], keys: Mapping[str, Ed25519PublicKey]
) -> str | None:
    """Why the checkpoint's signature does not hold, or None."""
    kid = checkpoint.get("kid")
    key = keys.get(kid) if isinstance(kid, str) else None
    if key is None:
        return f"it is signed with key {kid!r}, which is not among the keys given"
    encoded = checkpoint.get("signature")
    if not isinstance(encoded, str):
        return "it has no signature"
    try:
        key.verify(
            base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)),
            _signed_part(checkpoint),
        )
    except (InvalidSignature, ValueError):
        return f"its signature does not verify with key {kid!r}"
    return None
