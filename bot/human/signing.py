"""Where the signing keys come from: configured, or generated once per install.

There is no shared default key. Without BOT_SIGNING_KEYS the embedded
default generates a random key on first start and keeps it in the data
folder (mode 0600), so tokens survive a restart; a store shared between
hosts without explicit keys is refused, because each host would mint its
own key and refuse the others' tokens.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr

from bot.component_settings import NOT_BLANK, ComponentSettings, Hidden, key_list_secrets
from bot.human.tokens import (
    SigningConfigError,
    SigningKey,
    TokenSigner,
    parse_signing_keys,
    random_signing_key,
)

KEY_FILE = "signing-key"


class SigningSettings(ComponentSettings):
    """The configured keys (the first one signs), and the folder that keeps a generated one."""

    keys: Annotated[SecretStr | None, NOT_BLANK, Hidden(key_list_secrets)] = Field(
        None, alias="BOT_SIGNING_KEYS"
    )
    data_dir: Path = Field(Path("var"), alias="BOT_DATA_DIR")


def signer_from(signing: SigningSettings, *, shared_store: bool) -> TokenSigner:
    """The resume-token signer over ``keys_from``."""
    return TokenSigner(keys_from(signing, shared_store=shared_store))


def keys_from(signing: SigningSettings, *, shared_store: bool) -> tuple[SigningKey, ...]:
    """The configured keys; else the generated one, unless the store is shared.

    Resume tokens and answer links (``bot.api.links``) sign with these keys,
    each under its own audience, so neither can stand for the other.
    """
    if signing.keys is not None:
        return parse_signing_keys(signing.keys.get_secret_value())
    if shared_store:
        raise SigningConfigError(
            "BOT_SIGNING_KEYS is required with a shared store: every replica must sign "
            "with the same keys. Generate one with `python -m bot keygen`."
        )
    return (local_key(signing.data_dir),)


def local_key(data_dir: Path) -> SigningKey:
    """Read the generated key, creating it atomically (O_EXCL) the first time."""
    path = data_dir / KEY_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        key = random_signing_key("local")
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return _read(path)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(f"{key.kid}:{key.signing}\n")
    except OSError as error:
        # A file in the way, a read-only or virtual file system (/sys, /proc): one line.
        reason = (
            "is a file, not a folder"
            if data_dir.is_file()
            else (f"cannot hold the signing key ({error.strerror or error})")
        )
        raise SigningConfigError(
            f"BOT_DATA_DIR={data_dir} {reason}; set BOT_DATA_DIR to a writable folder "
            "(or set BOT_SIGNING_KEYS)"
        ) from None
    return key


def _read(path: Path) -> SigningKey:
    text = path.read_text().strip()
    if not text:
        raise SigningConfigError(f"{path} is empty; delete it to generate a new key.")
    return parse_signing_keys(text)[0]
