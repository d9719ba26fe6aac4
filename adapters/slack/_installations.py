"""OAuth installations in the bot's own database, encrypted at rest.

slack_sdk's kept stores (SQLAlchemy, SQLite, files) would open a second
connection beside ours and keep tokens in clear text, so installations go
through our ``Installations`` port instead: each one is JSON encrypted
with Fernet under a key derived from ``SLACK_INSTALLATION_KEY`` (several,
comma-separated: the first encrypts, all decrypt, so keys rotate) or, when
that is unset, from ``SLACK_CLIENT_SECRET``. The OAuth ``state`` is
stateless: an HMAC-signed timestamp, so any replica can check it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from adapters.slack.settings import SlackSettings
from bot.stores.ports import Installations

log = logging.getLogger(__name__)

PLATFORM = "slack"
STATE_SECONDS = 600
BOT_SCOPES = (
    "app_mentions:read",
    "channels:history",
    "groups:history",
    "im:history",
    "mpim:history",
    "chat:write",
    "commands",
    "usergroups:read",
)


def fernet_for(secrets_csv: str) -> MultiFernet:
    keys = [k.strip() for k in secrets_csv.split(",") if k.strip()]
    return MultiFernet([Fernet(_derive(k, b"slack-installations")) for k in keys])


def _derive(secret: str, purpose: bytes) -> bytes:
    return base64.urlsafe_b64encode(hashlib.sha256(purpose + b"\x00" + secret.encode()).digest())


class EncryptedInstallationStore(AsyncInstallationStore):
    """slack_sdk's installation store over our port; the port is bound at start."""

    def __init__(self, fernet: MultiFernet) -> None:
        self._fernet = fernet
        self.port: Installations | None = None

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        # One row per workspace (and its bot): the bot asks for no user tokens,
        # so there is nothing per installer to keep, and an uninstall removes all.
        team = _team_key(installation.enterprise_id, installation.team_id)
        await self._put(f"installation:{team}:latest", installation.to_dict_for_copying())
        await self.async_save_bot(installation.to_bot())

    async def async_save_bot(self, bot: Bot) -> None:
        team = _team_key(bot.enterprise_id, bot.team_id)
        await self._put(f"bot:{team}", bot.to_dict_for_copying())

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        data = await self._get(f"bot:{_team_key(enterprise_id, team_id, is_enterprise_install)}")
        return Bot(**data) if data else None

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        del user_id  # one installation per workspace, see async_save
        team = _team_key(enterprise_id, team_id, is_enterprise_install)
        data = await self._get(f"installation:{team}:latest")
        return Installation(**data) if data else None

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._port().delete(PLATFORM, f"bot:{_team_key(enterprise_id, team_id)}")

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is None:
            team = _team_key(enterprise_id, team_id)
            await self._port().delete(PLATFORM, f"installation:{team}:latest")

    async def _put(self, key: str, data: dict[str, Any]) -> None:
        plain = json.dumps(data, default=str).encode()
        await self._port().save(PLATFORM, key, self._fernet.encrypt(plain).decode())

    async def _get(self, key: str) -> dict[str, Any] | None:
        blob = await self._port().find(PLATFORM, key)
        if blob is None:
            return None
        try:
            data = json.loads(self._fernet.decrypt(blob.encode()))
        except InvalidToken:
            # Never the blob itself in the log: it holds a token.
            log.error(
                "a Slack installation cannot be decrypted: SLACK_INSTALLATION_KEY changed; "
                "add the old key after the new one, or reinstall the app",
                extra={"installation": key.split(":")[0]},
            )
            return None
        return data if isinstance(data, dict) else None

    def _port(self) -> Installations:
        if self.port is None:
            raise RuntimeError("installations used before the stores opened")
        return self.port


class SignedStateStore(AsyncOAuthStateStore):
    """OAuth ``state`` as ``nonce.time.hmac``: valid for ten minutes, on any replica."""

    def __init__(self, secret: str) -> None:
        self._key = _derive(secret, b"slack-oauth-state")

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        body = f"{secrets.token_urlsafe(12)}.{int(time.time())}"
        return f"{body}.{self._sign(body)}"

    async def async_consume(self, state: str) -> bool:
        body, _, signature = state.rpartition(".")
        if not body or not hmac.compare_digest(signature, self._sign(body)):
            return False
        try:
            issued = int(body.rsplit(".", 1)[1])
        except (IndexError, ValueError):
            return False
        return 0 <= time.time() - issued <= STATE_SECONDS

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:32]


def oauth_settings(settings: SlackSettings) -> AsyncOAuthSettings:
    """Bolt's OAuth settings with our encrypted store and stateless state."""
    secret = settings.client_secret
    assert secret is not None  # SlackSettings refuses SLACK_CLIENT_ID without it
    key = settings.installation_key
    material = key.get_secret_value() if key is not None else secret.get_secret_value()
    return AsyncOAuthSettings(
        client_id=settings.client_id,
        client_secret=secret.get_secret_value(),
        scopes=list(BOT_SCOPES),
        installation_store=EncryptedInstallationStore(fernet_for(material)),
        installation_store_bot_only=True,
        state_store=SignedStateStore(material),
        authorization_url=authorization_url(settings.api_url),
    )


def authorization_url(api_url: str) -> str:
    """Where a person approves the install: beside the Web API (slack.com, slack-gov.com)."""
    base = api_url.removesuffix("/").removesuffix("/api")
    return f"{base}/oauth/v2/authorize"


def _team_key(
    enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
) -> str:
    # An org-wide install answers for every team of its enterprise.
    if is_enterprise_install:
        team_id = None
    return f"{enterprise_id or '-'}:{team_id or '-'}"
