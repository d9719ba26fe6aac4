"""Teams with authentication on: a `python -m bot` process checks channel tokens.

The OpenID metadata and the JWKS (with the ``msteams`` endorsement) are
served on loopback by the fake connector, and the bot is pointed at them
with our overrides (TO_BOT_FROM_CHANNEL_*). Each test runs once per SDK
(BOT_TEAMS_SDK, the ``connector`` fixture's ``teams_sdk``). The bot runs in its
own process because botbuilder fetches the metadata with blocking ``requests`` calls.
"""

from __future__ import annotations

import json
import time
from typing import Any

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.e2e._server import BotServer, StartBot
from tests.e2e._teams import ALICE, execute
from tests.fakes.bf_connector import ISSUER, FakeConnector

pytestmark = pytest.mark.e2e

APP_ID = "0b5e1c7a-app"


async def _bot(start_bot: StartBot, connector: FakeConnector, **app: str) -> BotServer:
    app = app or {"MicrosoftAppId": APP_ID, "MicrosoftAppPassword": "test-secret"}
    return await start_bot(
        **app,
        TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL=f"{connector.url}/openid",
        TO_BOT_FROM_CHANNEL_TOKEN_ISSUER=ISSUER,
        BOT_CONSOLE="false",
    )


def _refused_invoke(connector: FakeConnector) -> dict[str, Any]:
    """An answer with a token that is not ours: accepted or not, nothing goes out."""
    return execute(connector.url, {"hitl": 1, "token": "not-a-token", "iid": "x"}, who=ALICE)


def _unsigned(token: str) -> str:
    """The token with its signature cut off (header and claims as signed)."""
    header, claims, _ = token.split(".")
    return f"{header}.{claims}."


def _claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


async def _post(
    http: aiohttp.ClientSession, server: BotServer, activity: dict[str, Any], token: str | None
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with http.post(f"{server.url}/api/messages", json=activity, headers=headers) as reply:
        text = await reply.text()
        return reply.status, json.loads(text) if text else None


async def test_a_channel_signed_token_is_accepted(
    start_bot: StartBot, http: aiohttp.ClientSession, connector: FakeConnector
) -> None:
    """A JWT signed with the endorsed key, for our app id and this serviceUrl, gets through."""
    server = await _bot(start_bot, connector)
    # Fetched at start, off the event loop, so no request waits on it.
    assert connector.key_fetches == 1
    activity = _refused_invoke(connector)
    token = connector.token(audience=APP_ID, service_url=connector.url)

    status, body = await _post(http, server, activity, token)
    assert status == 200, body
    assert body["type"] == "application/vnd.microsoft.card.adaptive"
    assert "not valid" in json.dumps(body["value"])

    update = {**activity, "type": "conversationUpdate", "name": None, "value": None}
    status, _ = await _post(http, server, update, token)
    assert status == 201


async def test_bad_tokens_get_401_never_500(
    start_bot: StartBot, http: aiohttp.ClientSession, connector: FakeConnector
) -> None:
    """Missing, expired, wrong audience/issuer/serviceUrl, unknown kid, forged, unsigned,
    alg none, garbage, a key not endorsed for the activity's channel: 401, on each SDK."""
    server = await _bot(start_bot, connector)
    activity = _refused_invoke(connector)
    url = connector.url
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    long_ago = int(time.time()) - 3600
    tokens: dict[str, str | None] = {
        "missing": None,
        "expired": connector.token(
            audience=APP_ID, service_url=url, exp=long_ago, iat=long_ago - 60, nbf=long_ago - 60
        ),
        "wrong audience": connector.token(audience="someone-else", service_url=url),
        "wrong issuer": connector.token(audience=APP_ID, service_url=url, iss="https://evil.test"),
        "wrong serviceUrl": connector.token(audience=APP_ID, service_url="https://evil.test"),
        "unknown kid": connector.token(audience=APP_ID, service_url=url, kid="rotated-away"),
        "foreign signature": connector.token(audience=APP_ID, service_url=url, key=stranger),
        "unsigned": _unsigned(connector.token(audience=APP_ID, service_url=url)),
        "alg none": jwt.encode(
            _claims(connector.token(audience=APP_ID, service_url=url)),
            None,
            algorithm="none",
            headers={"kid": connector.kid},
        ),
        "garbage": "abc.def.ghi",
    }
    statuses = {
        name: (await _post(http, server, activity, token))[0] for name, token in tokens.items()
    }
    # A good token for an activity from a channel the signing key is not endorsed for.
    webchat = {**activity, "channelId": "webchat"}
    good = connector.token(audience=APP_ID, service_url=url)
    statuses["key not endorsed for the channel"] = (await _post(http, server, webchat, good))[0]
    assert statuses == dict.fromkeys([*tokens, "key not endorsed for the channel"], 401)
    status, _ = await _post(
        http, server, activity, connector.token(audience=APP_ID, service_url=url)
    )
    assert status == 200
    assert "Traceback" not in server.log_text()


async def test_the_agents_sdk_names_for_the_app_work_on_either_sdk(
    start_bot: StartBot, http: aiohttp.ClientSession, connector: FakeConnector
) -> None:
    """CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID/CLIENTSECRET name the same app as
    MicrosoftAppId/MicrosoftAppPassword: a token for that app id gets through, another's not."""
    prefix = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"
    server = await _bot(
        start_bot,
        connector,
        **{f"{prefix}CLIENTID": APP_ID, f"{prefix}CLIENTSECRET": "test-secret"},
    )
    activity = _refused_invoke(connector)
    ours = connector.token(audience=APP_ID, service_url=connector.url)
    assert (await _post(http, server, activity, ours))[0] == 200
    theirs = connector.token(audience="another-app", service_url=connector.url)
    assert (await _post(http, server, activity, theirs))[0] == 401
