"""Teams on botbuilder-core (``BOT_TEAMS_SDK=botbuilder``): the one module that imports it.

``BotFramework`` is the ``TeamsSdk`` (``_sdk``) over botbuilder: authentication,
the turn pipeline and the bot's token. botbuilder ships no type information;
the untyped surface stays here, behind the typed class.

Two SDK behaviours are worked around rather than inherited:

- ``CloudAdapter.process`` serializes an invoke response body a second
  time and answers every ``Action.Execute`` with a 500, so the turn runs
  through ``process_activity`` and the caller writes the reply itself.
- Authentication failures surface as ``PermissionError``, ``jwt`` errors or
  bare ``Exception`` (missing header, expired token, unknown kid, foreign
  signature, garbage), which the stock path turns into a 500; here
  authentication runs on its own first, and any failure is ``Unauthenticated``.
"""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

from botbuilder.core import TurnContext  # type: ignore[import-untyped]
from botbuilder.integration.aiohttp import (  # type: ignore[import-untyped]
    CloudAdapter,
    ConfigurationBotFrameworkAuthentication,
    ConfigurationServiceClientCredentialFactory,
)
from botbuilder.schema import Activity  # type: ignore[import-untyped]
from botframework.connector.auth import (  # type: ignore[import-untyped]
    AuthenticationConstants,
    JwtTokenExtractor,
)
from msrest.universal_http.requests import ClientRetryPolicy

from adapters.teams._sdk import BadActivity, TurnLogic, Unauthenticated
from adapters.teams.settings import TeamsSettings

log = logging.getLogger(__name__)

# Every turn builds two msrest clients, and each builds a retry policy by testing
# 999 status codes for membership in a 500-item list: about 3 ms of CPU each, the
# bulk of the SDK's cost per activity. Only membership is ever asked of it, so a
# frozenset answers the same, in microseconds.
ClientRetryPolicy.safe_codes = frozenset(ClientRetryPolicy.safe_codes)  # type: ignore[assignment]


class BotFramework:
    """Inbound authentication, the turn pipeline and outbound bot tokens, on botbuilder."""

    def __init__(self, settings: TeamsSettings) -> None:
        self.app_id = settings.app_id or ""
        self.emulator = not self.app_id
        config = _sdk_configuration(settings)
        self._credentials = ConfigurationServiceClientCredentialFactory(config)
        self._auth = ConfigurationBotFrameworkAuthentication(
            config, credentials_factory=self._credentials
        )
        self._adapter = CloudAdapter(self._auth)
        self._login_url = config.TO_CHANNEL_FROM_BOT_LOGIN_URL or (
            AuthenticationConstants.TO_CHANNEL_FROM_BOT_LOGIN_URL
        )
        self._scope = config.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE or (
            AuthenticationConstants.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE
        )
        self._outbound: Any = None
        self.metadata_url = config.TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL or (
            AuthenticationConstants.TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL
        )

    @staticmethod
    def parse(body: dict[str, Any]) -> Any:
        """The SDK's Activity for a JSON body, or BadActivity."""
        try:
            activity = Activity().deserialize(body)
        except Exception as error:  # noqa: BLE001  msrest raises many unrelated types
            raise BadActivity(str(error)) from None
        if not activity.type:
            raise BadActivity("no type")
        return activity

    async def authenticate(self, activity: Any, header: str) -> Any:
        """Prove the activity came from the channel; Unauthenticated otherwise.

        In emulator mode the header is ignored: validating one would fetch
        the public cloud's signing keys, and there is nothing to check it against.
        """
        try:
            return await self._auth.authenticate_request(activity, "" if self.emulator else header)
        except Exception as error:  # noqa: BLE001  the SDK raises bare Exception for bad tokens
            raise Unauthenticated(f"{type(error).__name__}: {error}") from None

    async def process(
        self, authenticated: Any, activity: Any, body: dict[str, Any], logic: TurnLogic
    ) -> Any:
        """Run ``logic`` inside the SDK's turn pipeline; return what it returned."""
        result: list[Any] = []

        async def turn(context: Any) -> None:
            reference = TurnContext.get_conversation_reference(context.activity).serialize()
            result.append(await logic(body, reference))

        await self._adapter.process_activity(authenticated, activity, turn)
        return result[0] if result else None

    async def refresh_signing_keys(self) -> None:
        """Fetch the channel's signing keys in a thread, into the SDK's shared cache.

        The SDK fetches them itself with blocking ``requests`` calls (no
        timeout) from inside a request, on the event loop, whenever its copy
        is a day old, or an hour old and a token names an unknown kid. Kept
        fresher than an hour from here, that fetch never runs on the loop.
        """
        metadata = JwtTokenExtractor.get_open_id_metadata(self.metadata_url)
        await asyncio.to_thread(asyncio.run, metadata._refresh())

    async def bot_token(self) -> str | None:
        """A token for calls to the connector; None in emulator mode.

        The SDK's credentials use MSAL, which blocks on the network while it
        fetches (once an hour, then cached), so the fetch runs in a thread.
        """
        if self.emulator:
            return None
        if self._outbound is None:
            self._outbound = await self._credentials.create_credentials(
                self.app_id, self._scope, self._login_url, True
            )
        token = await asyncio.to_thread(self._outbound.get_access_token)
        return str(token)


def _sdk_configuration(settings: TeamsSettings) -> SimpleNamespace:
    """The attribute names ``ConfigurationBotFrameworkAuthentication`` reads."""
    password = settings.app_password
    overrides = {
        "TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL": settings.openid_metadata_url,
        "TO_BOT_FROM_CHANNEL_TOKEN_ISSUER": settings.token_issuer,
        "TO_CHANNEL_FROM_BOT_LOGIN_URL": settings.login_url,
        "TO_CHANNEL_FROM_BOT_OAUTH_SCOPE": settings.oauth_scope,
    }
    if any(overrides.values()):
        # Any one override switches the SDK to its parameterized cloud, which
        # takes every other value as given (None included): fill the public
        # cloud's defaults in, so overriding one key never unsets the rest.
        defaults = {
            "TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL": (
                AuthenticationConstants.TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL
            ),
            "TO_BOT_FROM_CHANNEL_TOKEN_ISSUER": (
                AuthenticationConstants.TO_BOT_FROM_CHANNEL_TOKEN_ISSUER
            ),
            "TO_CHANNEL_FROM_BOT_LOGIN_URL": AuthenticationConstants.TO_CHANNEL_FROM_BOT_LOGIN_URL,
            "TO_CHANNEL_FROM_BOT_OAUTH_SCOPE": (
                AuthenticationConstants.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE
            ),
        }
        overrides = {key: value or defaults[key] for key, value in overrides.items()}
        overrides["TO_BOT_FROM_EMULATOR_OPENID_METADATA_URL"] = (
            AuthenticationConstants.TO_BOT_FROM_EMULATOR_OPENID_METADATA_URL
        )
        overrides["OAUTH_URL"] = AuthenticationConstants.OAUTH_URL
    return SimpleNamespace(
        APP_ID=settings.app_id or "",
        APP_PASSWORD=password.get_secret_value() if password else "",
        APP_TYPE=settings.app_type,
        APP_TENANTID=settings.app_tenant_id or "",
        **overrides,
    )
