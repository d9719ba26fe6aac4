"""Data keys: what the store's content columns are encrypted with at rest (``BOT_DATA_KEYS``).

``BOT_DATA_KEYS`` is a keyring in the ``id:secret,id:secret`` form of
``BOT_SIGNING_KEYS``; each secret is 32 random bytes in URL-safe base64
(``python -m bot keygen --data``). The first key encrypts new values, every
listed key decrypts, so a new key goes first and the old one stays listed
until ``python -m bot data rekey`` has moved every row onto the new one.

A sealed value is text, so it fits the columns as they are: ``enc1:``, the
key's id, ``:``, and the URL-safe base64 of AES-GCM's nonce and ciphertext.
A value without the marker is a plaintext row from before (JSON text never
starts with ``e``), or the empty object ``{}``, never sealed; read as it is.
Each value is sealed with associated data
naming its table, column and row, so a ciphertext copied to another row or
column does not decrypt.

The keyring is the process's (``use``), as the settings name one: the
row<->record code (``_rows``) seals and opens at the column boundary.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.component_settings import parse_key_list
from bot.errors import BotError

MARKER = "enc1:"
# The empty object is stored as it is: it holds nothing to hide (a sealed one's length
# would tell as much), and a cycle writes several (an audit event's or a post's empty
# detail), each seal an AES-GCM call. Rekey leaves it as it is too.
EMPTY = "{}"
KEY_BYTES = 32
_NONCE_BYTES = 12
GENERATE = "python -m bot keygen --data"


class DataKeyError(BotError):
    """The data keys are unusable, or do not open the store's rows; the message says which."""


@dataclass(frozen=True, slots=True)
class DataKey:
    """One key by id; ``repr`` never shows the secret."""

    kid: str
    aead: AESGCM = field(repr=False)


# How many values this process sealed are remembered, with their plaintext, to be opened
# without AES-GCM: a question's row, its answer and its turn are read back by the steps
# that follow, mostly in the process that wrote them. All go at once when it is full.
_REMEMBERED = 256


@dataclass(frozen=True, slots=True)
class DataKeys:
    """The keyring: ``keys[0]`` seals, every key opens.

    A value this keyring sealed opens from memory: the same sealed text under the same
    associated data (its table, column and row) is the same plaintext, so it is kept by
    both. Any other text, one moved to another row included, is decrypted (and refused)
    as ever; a new keyring starts with nothing remembered."""

    keys: tuple[DataKey, ...]
    _sealed: dict[tuple[str, str], str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def current(self) -> str:
        """The id new values are sealed under."""
        return self.keys[0].kid

    def seal(self, text: str, aad: str) -> str:
        if text == EMPTY:
            return text
        key = self.keys[0]
        nonce = os.urandom(_NONCE_BYTES)
        sealed = key.aead.encrypt(nonce, text.encode(), aad.encode())
        stored = f"{MARKER}{key.kid}:{base64.urlsafe_b64encode(nonce + sealed).decode()}"
        remembered = self._sealed
        if len(remembered) >= _REMEMBERED:
            remembered.clear()  # one step, safe beside SQLite's worker thread opening rows
        remembered[(stored, aad)] = text
        return stored

    def open(self, text: str, aad: str) -> str:
        plain = self._sealed.get((text, aad))
        if plain is not None:
            return plain
        kid, _, body = text[len(MARKER) :].partition(":")
        key = next((k for k in self.keys if k.kid == kid), None)
        if key is None:
            raise DataKeyError(
                f"a stored value is encrypted under data key {kid!r}, which BOT_DATA_KEYS "
                "does not list; list it again (after the new key) until `python -m bot data "
                "rekey` has moved every row"
            )
        try:
            raw = base64.urlsafe_b64decode(body)
            return key.aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], aad.encode()).decode()
        except (InvalidTag, binascii.Error, ValueError):
            raise DataKeyError(
                f"BOT_DATA_KEYS key {kid!r} does not decrypt the store's rows: its secret is "
                "not the one they were written with (or the row was altered)"
            ) from None


def parse_data_keys(text: str) -> DataKeys:
    """Parse ``kid:secret,kid:secret``; DataKeyError, one sentence, when it is not that."""
    return DataKeys(tuple(parse_key_list(text, "BOT_DATA_KEYS", DataKeyError, _data_key)))


def _data_key(kid: str, secret: str) -> DataKey:
    try:
        raw = base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise DataKeyError(
            f"BOT_DATA_KEYS key {kid!r} is not {KEY_BYTES} bytes in URL-safe base64; "
            f"generate one with `{GENERATE}`."
        )
    return DataKey(kid, AESGCM(raw))


def random_data_key() -> str:
    """A new ``kid:secret`` entry for ``BOT_DATA_KEYS``."""
    secret = base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode().rstrip("=")
    return f"d{secrets.token_hex(3)}:{secret}"


# The process's keyring; None: values are written as plaintext.
_keyring: DataKeys | None = None


def use(keys: DataKeys | None) -> None:
    """Seal new values under ``keys`` (None: plaintext) from now on, in this process."""
    global _keyring
    _keyring = keys


def in_use() -> DataKeys | None:
    return _keyring


def seal(text: str | None, aad: str) -> str | None:
    """``text`` as the column holds it: sealed under the current key, or as it is."""
    if text is None or _keyring is None:
        return text
    return _keyring.seal(text, aad)


def unseal(text: str | None, aad: str) -> str | None:
    """A column's value as plaintext: opened if sealed, else as it is."""
    if text is None or not text.startswith(MARKER):
        return text
    if _keyring is None:
        kid = text[len(MARKER) :].partition(":")[0]
        raise DataKeyError(
            f"the store holds values encrypted under data key {kid!r}; set BOT_DATA_KEYS "
            "to the keyring they were written with"
        )
    return _keyring.open(text, aad)
