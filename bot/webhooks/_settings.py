"""The webhook settings: the signing secret, whether private targets are allowed, the timeout.

Webhooks are on when ``BOT_WEBHOOK_SECRET`` is set. The secret is the
Standard Webhooks form, ``whsec_`` and the base64 of the key; it is marked
hidden, so the log filter rewrites it (and its key part on its own)
wherever it appears.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from typing import Annotated

from pydantic import AfterValidator, Field, SecretStr

from bot.component_settings import NOT_BLANK, ComponentSettings, Hidden

PREFIX = "whsec_"
# The Standard Webhooks specification asks for keys of 24 to 64 bytes.
MIN_KEY_BYTES = 24
GENERATE = "python -m bot keygen --webhook"


def random_webhook_secret() -> str:
    """A new ``whsec_`` secret with a 32-byte key."""
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def webhook_key(secret: str) -> bytes | None:
    """The key a ``whsec_`` secret holds; None when the secret is malformed."""
    if not secret.startswith(PREFIX):
        return None
    try:
        key = base64.b64decode(secret[len(PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        return None
    return key if len(key) >= MIN_KEY_BYTES else None


def _well_formed(value: SecretStr | None) -> SecretStr | None:
    # The message never repeats the value: it is a secret, and errors reach the terminal.
    if value is not None and webhook_key(value.get_secret_value()) is None:
        raise ValueError(
            f"is {PREFIX} followed by the base64 of at least {MIN_KEY_BYTES} random bytes, "
            f"the same secret the receiver verifies with; generate one with {GENERATE}"
        )
    return value


def _key_part(text: str) -> list[str]:
    # A log line could carry the key without its prefix.
    return [text.removeprefix(PREFIX)]


class WebhookSettings(ComponentSettings):
    """The secret that signs question callbacks, and how far a callback may reach."""

    secret: Annotated[
        SecretStr | None, NOT_BLANK, AfterValidator(_well_formed), Hidden(_key_part)
    ] = Field(None, alias="BOT_WEBHOOK_SECRET")
    allow_private: bool = Field(False, alias="BOT_WEBHOOK_ALLOW_PRIVATE")
    # Below the outbox's claim on a row, so no other process delivers it meanwhile.
    timeout_seconds: float = Field(10.0, alias="BOT_WEBHOOK_TIMEOUT_SECONDS", gt=0, le=30)

    @property
    def enabled(self) -> bool:
        """Webhooks are sent: a secret is set."""
        return self.secret is not None

    @property
    def mode(self) -> str | None:
        """How webhooks are configured, in words; None when they are off."""
        if self.secret is None:
            return None
        reach = "private addresses allowed" if self.allow_private else "public addresses only"
        return f"signed with BOT_WEBHOOK_SECRET, {reach}, {self.timeout_seconds:g} s timeout"

    def warnings(self) -> list[str]:
        """Allowing private targets without a secret does nothing: webhooks stay off."""
        if self.allow_private and self.secret is None:
            return [
                "BOT_WEBHOOK_ALLOW_PRIVATE is set without BOT_WEBHOOK_SECRET, so webhooks are "
                "off; set the secret, or unset it"
            ]
        return []
