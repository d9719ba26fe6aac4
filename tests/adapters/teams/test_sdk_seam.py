"""The seam (``adapters/teams/_sdk``): BOT_TEAMS_SDK picks the SDK (``_sdk_choice``), and only
that one loads.

The Agents SDK's settings names configure the same app as the Bot Framework's, and
both SDKs hand the turn the same conversation reference (the Agents SDK's keeps the
conversation's tenantId too, which the surface does not read), so a run started on
one is posted to by the other after a switch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from adapters.teams._sdk_choice import open_sdk
from adapters.teams.settings import AGENTS_CONNECTION, TeamsSettings
from tests.e2e._server import free_port
from tests.e2e._teams import ALICE, PERSONAL, message
from tests.support import ROOT, TEAMS_SDKS, clean_environment, run_text

# Serve Teams in emulator mode through the whole app (start, one message, stop) and
# print every botbuilder, botframework or msrest module then loaded.
SERVE_AND_LIST = """
import asyncio, json, sys
from aiohttp.test_utils import TestClient, TestServer
from bot.app import create_app
from bot.app.settings import load_settings

async def main():
    settings = load_settings(
        DATABASE_URL="sqlite:///{folder}/bot.sqlite3", BOT_DATA_DIR="{folder}/var",
        BOT_CONSOLE=False, BOT_TEAMS_SDK="{sdk}", PORT={port},
    )
    server = TestServer(create_app(settings), host="127.0.0.1", port={port})
    async with TestClient(server) as client:
        reply = await client.post("/api/messages", json={activity})
        assert reply.status == 201, reply.status

asyncio.run(main())
old = ("botbuilder", "botframework", "msrest")
print(json.dumps(sorted(n for n in sys.modules if n.split(".")[0] in old)))
"""


@pytest.mark.parametrize("sdk", TEAMS_SDKS)
def test_a_server_on_the_agents_sdk_imports_no_botbuilder(tmp_path: Path, sdk: str) -> None:
    """Served on the Agents SDK, no botbuilder/botframework module is ever imported; on
    botbuilder they are (so the probe would see them)."""
    activity = message("http://127.0.0.1:9", "hello")
    script = SERVE_AND_LIST.format(
        folder=tmp_path, sdk=sdk, activity=repr(activity), port=free_port()
    )
    env = {"PATH": "/usr/bin:/bin"}
    done = run_text([sys.executable, "-c", script], env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    if sdk == "agents":
        assert loaded == []
    else:
        assert "botbuilder.core" in loaded and "botframework.connector" in loaded


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_environment(monkeypatch, tmp_path, TeamsSettings.variables())


@pytest.mark.usefixtures("environment")
def test_the_agents_sdk_names_configure_the_same_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """CONNECTIONS__SERVICE_CONNECTION__SETTINGS__* read into the fields the Bot Framework's
    names do (docs/teams.md's table); SCOPES' ``/.default`` is the resource's scope."""
    sdk_names = {
        "CLIENTID": "app-7",
        "CLIENTSECRET": "s3cret",
        "TENANTID": "tenant-7",
        "AUTHORITY": "https://login.example.test/tenant-7",
        "SCOPES": "https://api.example.test/.default",
    }
    for name, value in sdk_names.items():
        monkeypatch.setenv(AGENTS_CONNECTION + name, value)
    monkeypatch.setenv("MicrosoftAppType", "SingleTenant")
    settings = TeamsSettings()
    assert settings.app_id == "app-7"
    assert settings.app_password is not None
    assert settings.app_password.get_secret_value() == "s3cret"
    assert settings.app_tenant_id == "tenant-7"
    assert settings.login_url == "https://login.example.test/tenant-7"
    assert settings.oauth_scope == "https://api.example.test"
    # Where both are set, the Bot Framework's name wins.
    monkeypatch.setenv("MicrosoftAppId", "app-from-ours")
    assert TeamsSettings().app_id == "app-from-ours"


def test_without_the_extra_the_agents_sdk_is_refused_in_one_sentence() -> None:
    """BOT_TEAMS_SDK=agents in a Python without microsoft_agents: a settings error naming the
    extra and how to install it."""
    probe = (
        "import sys\n"
        "sys.modules['microsoft_agents'] = None\n"
        "from pydantic import ValidationError\n"
        "from adapters.teams.settings import TeamsSettings\n"
        "try:\n"
        "    TeamsSettings(BOT_TEAMS_SDK='agents')\n"
        "except ValidationError as error:\n"
        "    print(error.errors()[0]['msg'])\n"
    )
    done = run_text([sys.executable, "-c", probe], env={"PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "Value error, BOT_TEAMS_SDK=agents needs the teams-agents extra, which is not installed: "
        "pip install -e '.[teams-agents]' from the checkout's root"
    )


async def test_both_sdks_hand_the_turn_the_same_reference_and_body() -> None:
    """The turn's logic gets the body as received and one conversation reference, whichever
    SDK ran the turn: runs stored under one are posted to by the other."""
    activity = message("https://smba.example.test/amer/", "deploy web", who=ALICE)
    activity["locale"] = "en-US"
    seen: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for sdk in TEAMS_SDKS:
        teams = open_sdk(TeamsSettings(BOT_TEAMS_SDK=sdk))
        parsed = teams.parse(activity)
        identity = await teams.authenticate(parsed, "")

        async def logic(body: dict[str, Any], reference: dict[str, Any], sdk: str = sdk) -> str:
            seen[sdk] = (body, reference)
            return sdk

        assert await teams.process(identity, parsed, activity, logic) == sdk
    (body, reference), (agents_body, agents_reference) = (seen[sdk] for sdk in TEAMS_SDKS)
    assert body is activity and agents_body is activity
    tenant = {"tenantId": activity["conversation"]["tenantId"]}
    assert agents_reference == {
        **reference,
        "conversation": {**reference["conversation"], **tenant},
    }
    assert reference["serviceUrl"] == activity["serviceUrl"]
    assert reference["conversation"]["id"] == PERSONAL
    assert reference["user"]["aadObjectId"] == ALICE["aadObjectId"]


@pytest.mark.parametrize(
    ("app", "tenant", "authority", "channel_issuer"),
    [
        (
            {},
            "botframework.com",
            "https://login.microsoftonline.com/botframework.com",
            "https://api.botframework.com",
        ),
        (
            {"MicrosoftAppType": "SingleTenant", "MicrosoftAppTenantId": "t-1"},
            "t-1",
            "https://login.microsoftonline.com/t-1",
            "https://api.botframework.com",
        ),
        # The US Government cloud's sign-in: the SDK expects that cloud's channel issuer.
        (
            {"TO_CHANNEL_FROM_BOT_LOGIN_URL": "https://login.microsoftonline.us/x"},
            "botframework.com",
            "https://login.microsoftonline.us/x",
            "https://api.botframework.us",
        ),
    ],
)
def test_the_agents_sdk_gets_the_app_its_tenant_and_where_to_sign_in(
    app: dict[str, str], tenant: str, authority: str, channel_issuer: str
) -> None:
    """Multi-tenant apps sign in at the Bot Framework's tenant, single-tenant apps at theirs,
    as on botbuilder; the issuer check is on, for the cloud's issuers or the override."""
    from adapters.teams._agents import AgentsSdk

    settings = TeamsSettings(MicrosoftAppId="app-1", MicrosoftAppPassword="s", **app)
    configuration = AgentsSdk(settings).configuration
    signs_in = (configuration.CLIENT_ID, configuration.TENANT_ID, configuration.AUTHORITY)
    assert signs_in == ("app-1", tenant, authority)
    assert configuration.VALIDATE_ISSUER
    assert channel_issuer in configuration.ISSUERS
    issuer = TeamsSettings(
        MicrosoftAppId="app-1", MicrosoftAppPassword="s", TO_BOT_FROM_CHANNEL_TOKEN_ISSUER="i"
    )
    assert AgentsSdk(issuer).configuration.ISSUERS == ["i"]
