"""Teams on the Microsoft 365 Agents SDK (``BOT_TEAMS_SDK=agents``): the one module importing it.

``AgentsSdk`` is the ``TeamsSdk`` (``_sdk``) over microsoft-agents-hosting-core,
-hosting-aiohttp, -activity and -authentication-msal: the SDK's JWT validator
proves each request, its ``CloudAdapter`` runs the turn, and MSAL gets the
bot's token. Where this differs from using the SDK as shipped, and why:

- The SDK's validator picks the signing keys' address from the token's issuer,
  from a fixed list (the public and US Government clouds). With
  ``TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL`` set, it is handed the key set that
  metadata names instead (``_ChannelKeys``), so other clouds, and the tests'
  loopback endpoint, work as on botbuilder. Its key cache is a private part of
  the SDK (1.9); the JWT tests on loopback fail if a release changes it.
- The SDK does not read a signing key's ``endorsements``; as on botbuilder, a key
  endorsed for some channels signs only their activities (``_ChannelKeys``).
- The SDK checks the issuer only when asked (``VALIDATE_ISSUER``): asked here, for
  its tenant's issuers, or ``TO_BOT_FROM_CHANNEL_TOKEN_ISSUER`` when set.
- The SDK compares the ``serviceurl`` claim's host only when its host validator
  is on; here the claim must equal the activity's ``serviceUrl``, as botbuilder
  requires, so both paths refuse the same requests.
- The turn's connector clients (``_TurnClients``) carry no token: the turn never
  sends through them (posts and edits go through ``_connector``, which asks
  ``bot_token`` when it sends), and the SDK's own factory would fetch a token
  from Entra for every request.
- The SDK's activity model refuses an empty string where Teams may send one (an
  invoke's ``replyToId``) or null; it is given the body without them (the turn's logic
  still gets the body as received). An activity it refuses is a 400 that
  ``_mount`` logs once: the SDK's own ERROR line with a traceback is dropped.
- The turn's conversation reference is the activity's own fields under
  botbuilder's keys (``_reference``): the SDK's model of one requires a recipient.
- ``on_turn_error`` is unset: a failure in our logic propagates, as on botbuilder,
  instead of the SDK printing a traceback and posting the error into the chat.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

import aiohttp
from jwt import PyJWK
from microsoft_agents.activity import Activity
from microsoft_agents.authentication.msal import MsalAuth
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.authorization import (
    AgentAuthConfiguration,
    AuthenticationConstants,
    AuthTypes,
    ClaimsIdentity,
    JwtTokenValidator,
)
from microsoft_agents.hosting.core.authorization.jwt.jwt_token_validator import (
    _JwkClientCacheEntry,
    _JwkClientManager,
)
from microsoft_agents.hosting.core.connector import ConnectorClientBase, UserTokenClientBase
from microsoft_agents.hosting.core.connector.client import UserTokenClient
from microsoft_agents.hosting.core.connector.teams import TeamsConnectorClient

from adapters.teams._sdk import BadActivity, TurnLogic, Unauthenticated
from adapters.teams.settings import (
    MULTI_TENANT_LOGIN_TENANT,
    PUBLIC_OAUTH_SCOPE,
    PUBLIC_OPENID_METADATA_URL,
    TeamsSettings,
)

METADATA_TIMEOUT = aiohttp.ClientTimeout(total=15)


class _RefusedActivityLogged(logging.Filter):
    """Drops the SDK's ERROR line (and traceback) for a body its model refuses."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Validation error for Activity")


logging.getLogger("microsoft_agents.activity.activity").addFilter(_RefusedActivityLogged())


def _without_empty_strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_empty_strings(v) for k, v in value.items() if v not in ("", None)}
    if isinstance(value, list):
        return [_without_empty_strings(item) for item in value]
    return value


# The channel of the activity being authenticated, for the endorsement check (a context
# variable: concurrent requests each see their own, in the key lookup's thread too).
_CHANNEL: contextvars.ContextVar[str] = contextvars.ContextVar("teams_channel", default="")


class _ChannelKeys(_JwkClientManager):
    """The validator's signing keys: the key set an OpenID metadata document names when one
    is set (whichever address the SDK would have chosen from the token's issuer), and
    only a key endorsed for the activity's channel, when the key lists endorsements."""

    def __init__(self, metadata_url: str | None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.metadata_url = metadata_url
        self.jwks_uri = ""
        self._discovering = asyncio.Lock()

    @property
    def known(self) -> bool:
        """The key set's address is known (always, when the SDK's own routing is used)."""
        return self.metadata_url is None or bool(self.jwks_uri)

    async def discover(self) -> None:
        """Read the metadata's ``jwks_uri`` (at start, and again at each refresh)."""
        if self.metadata_url is None:
            return
        async with self._discovering:
            async with (
                aiohttp.ClientSession(timeout=METADATA_TIMEOUT) as http,
                http.get(self.metadata_url) as reply,
            ):
                reply.raise_for_status()
                document = await reply.json(content_type=None)
            uri = document.get("jwks_uri") if isinstance(document, dict) else None
            if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
                raise ValueError(f"{self.metadata_url} names no jwks_uri")
            self.jwks_uri = uri

    def _get_jwk_client(self, jwks_uri: str) -> _JwkClientCacheEntry:
        if self.metadata_url is None:
            return super()._get_jwk_client(jwks_uri)
        if not self.jwks_uri:
            raise ValueError("the channel's signing keys are not known yet")
        return super()._get_jwk_client(self.jwks_uri)

    async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> PyJWK:
        key = await super().get_signing_key(jwks_uri, header)
        endorsements = key._jwk_data.get("endorsements")
        channel = _CHANNEL.get()
        if endorsements and channel and channel not in endorsements:
            raise ValueError(f"the signing key is not endorsed for the {channel} channel")
        return key


class _TurnClients:
    """The SDK's clients for one turn, without tokens: the turn sends nothing through them."""

    def __init__(self, app_id: str) -> None:
        # Emulator mode has no app; the SDK warns on every turn without one.
        self.app_id = app_id or "emulator"

    async def create_connector_client(
        self,
        context: TurnContext | None,
        claims_identity: ClaimsIdentity,
        service_url: str,
        audience: str,
        scopes: list[str] | None = None,
        use_anonymous: bool = False,
    ) -> ConnectorClientBase:
        return TeamsConnectorClient(endpoint=service_url, token="")

    async def create_user_token_client(
        self,
        context: TurnContext,
        claims_identity: ClaimsIdentity,
        use_anonymous: bool = False,
    ) -> UserTokenClientBase:
        return UserTokenClient(
            endpoint=AuthenticationConstants.AGENTS_SDK_OAUTH_URL, token="", app_id=self.app_id
        )


class AgentsSdk:
    """Inbound authentication, the turn pipeline and outbound bot tokens, on the Agents SDK."""

    def __init__(self, settings: TeamsSettings) -> None:
        self.app_id = settings.app_id or ""
        self.emulator = not self.app_id
        self.metadata_url = settings.openid_metadata_url or PUBLIC_OPENID_METADATA_URL
        self._scope = (settings.oauth_scope or PUBLIC_OAUTH_SCOPE).rstrip("/")
        self.configuration = _configuration(settings, self._scope)
        self._validator = JwtTokenValidator(self.configuration)
        self._keys = _ChannelKeys(settings.openid_metadata_url)
        self._validator._jwk_client_manager = self._keys
        self._adapter = CloudAdapter(channel_service_client_factory=_TurnClients(self.app_id))
        self._adapter.on_turn_error = None
        self._msal = MsalAuth(self.configuration)

    @staticmethod
    def parse(body: dict[str, Any]) -> Activity:
        """The SDK's Activity for a JSON body, or BadActivity."""
        try:
            activity = Activity.model_validate(_without_empty_strings(body))
        except Exception as error:  # noqa: BLE001  pydantic's errors, or a bare Exception (a
            # channel id contradicting its productInfo entity)
            raise BadActivity(type(error).__name__) from None
        if not activity.type:
            raise BadActivity("no type")
        return activity

    async def authenticate(self, activity: Activity, header: str) -> ClaimsIdentity:
        """Prove the activity came from the channel; Unauthenticated otherwise.

        In emulator mode the header is ignored: the SDK's anonymous identity.
        """
        if self.emulator:
            return self._validator.get_anonymous_claims()
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("no bearer token in the Authorization header")
        _CHANNEL.set(str(activity.channel_id or ""))
        try:
            if not self._keys.known:
                await self._keys.discover()
            identity = await self._validator.validate_token(token.strip())
        except Exception as error:  # noqa: BLE001  pyjwt's errors, ValueError, KeyError (no kid), network
            raise Unauthenticated(f"{type(error).__name__}: {error}") from None
        claimed = identity.get_claim_value(AuthenticationConstants.SERVICE_URL_CLAIM)
        if claimed != activity.service_url:
            raise Unauthenticated("the token's serviceurl claim names another service URL")
        return identity

    async def process(
        self,
        authenticated: ClaimsIdentity,
        activity: Activity,
        body: dict[str, Any],
        logic: TurnLogic,
    ) -> Any:
        """Run ``logic`` inside the SDK's turn pipeline; return what it returned."""
        result: list[Any] = []

        async def turn(context: TurnContext) -> None:
            result.append(await logic(body, _reference(body)))

        await self._adapter.process_activity(authenticated, activity, turn)
        return result[0] if result else None

    async def refresh_signing_keys(self) -> None:
        """Fetch the channel's signing keys in a thread, into the validator's cache.

        The validator itself fetches them in a thread too, when its copy is five
        minutes old or a token names an unknown kid; fetched here at start, the
        first request does not wait on it.
        """
        await self._keys.discover()
        # The SDK's own address for the public cloud's channel keys, unless overridden.
        entry = self._keys._get_jwk_client(AuthenticationConstants.PUBLIC_ABS_JWKS_URL)

        def fetch() -> None:
            with entry.lock:
                entry.jwk_client.get_jwk_set(refresh=True)

        await asyncio.to_thread(fetch)

    async def bot_token(self) -> str | None:
        """A token for calls to the connector (MSAL, cached; it fetches in a thread);
        None in emulator mode."""
        if self.emulator:
            return None
        return await self._msal.get_access_token(self._scope, [f"{self._scope}/.default"])


# A conversation reference's keys, and the activity's field each is taken from.
_REFERENCE_FIELDS = {
    "activityId": "id",
    "user": "from",
    "bot": "recipient",
    "conversation": "conversation",
    "channelId": "channelId",
    "locale": "locale",
    "serviceUrl": "serviceUrl",
}


def _reference(body: dict[str, Any]) -> dict[str, Any]:
    """The activity's conversation reference, as botbuilder serializes one (a run keeps it,
    and is posted to on either SDK). Not the SDK's ``get_conversation_reference``: its model
    requires the recipient, which the door lets an activity leave out."""
    return {
        key: body[field] for key, field in _REFERENCE_FIELDS.items() if body.get(field) is not None
    }


def _configuration(settings: TeamsSettings, scope: str) -> AgentAuthConfiguration:
    """The SDK's service connection, from our settings (either names; docs/teams.md)."""
    password = settings.app_password
    single = settings.app_type != "MultiTenant"
    tenant = settings.app_tenant_id if single else MULTI_TENANT_LOGIN_TENANT
    managed = settings.app_type == "UserAssignedMSI"
    return AgentAuthConfiguration(
        auth_type=AuthTypes.user_managed_identity if managed else AuthTypes.client_secret,
        client_id=settings.app_id or None,
        tenant_id=tenant,
        client_secret=password.get_secret_value() if password else None,
        authority=settings.login_url_or_default(),
        scopes=[f"{scope}/.default"],
        anonymous_allowed=not settings.app_id,
        issuers=[settings.token_issuer] if settings.token_issuer else None,
        validate_issuer=True,
    )
