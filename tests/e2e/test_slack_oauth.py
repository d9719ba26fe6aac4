"""Several workspaces: OAuth install, the token kept encrypted in our own database."""

from __future__ import annotations

import json
import re
import sqlite3

import aiohttp
import pytest

from tests import waiting
from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, SlackDriver
from tests.fakes.slack_api import INSTALLED_TOKEN, SIGNING_SECRET, FakeSlack, buttons, mention

pytestmark = pytest.mark.e2e


async def test_a_workspace_installs_then_its_token_answers_its_events(
    fake: FakeSlack, start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """/slack/install -> Slack -> /slack/oauth_redirect stores the install; events then use it."""
    bot = await start_bot(
        SLACK_CLIENT_ID="111.222",
        SLACK_CLIENT_SECRET="client-secret-for-tests",
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_INSTALLATION_KEY="installation-key-for-tests",
        SLACK_API_URL=fake.api_url,
    )
    async with http.get(f"{bot.url}/slack/install", allow_redirects=False) as response:
        page = await response.text()
        cookie = response.headers["Set-Cookie"].split(";")[0]
    assert response.status == 200 and "client_id=111.222" in page
    state = re.search(r"state=([^&\"]+)", page)
    assert state is not None

    redirect = f"{bot.url}/slack/oauth_redirect?code=the-code&state={state.group(1)}"
    async with http.get(redirect, headers={"Cookie": cookie}) as response:
        assert response.status == 200, await response.text()
    assert fake.of("oauth.v2.access")[0].args["code"] == "the-code"

    forged = f"{bot.url}/slack/oauth_redirect?code=the-code&state=forged.1.x"
    async with http.get(forged, headers={"Cookie": "slack-app-oauth-state=forged.1.x"}) as response:
        assert response.status == 401
        assert "invalid_state" in await response.text()

    slack = SlackDriver(http, bot, fake)
    assert await slack.event(mention("deploy web", user=ALICE)) == 200
    ask = await slack.question()
    assert ask.token == INSTALLED_TOKEN and buttons(ask.args)

    database = bot.folder / "bot.sqlite3"
    with sqlite3.connect(database) as conn:
        blobs = [row[0] for row in conn.execute("SELECT blob FROM installations")]
    assert blobs and all(INSTALLED_TOKEN not in blob for blob in blobs)
    assert INSTALLED_TOKEN not in bot.log_text()
    assert json.dumps(INSTALLED_TOKEN)[1:-1] not in database.read_bytes().decode("latin-1")

    # The workspace uninstalls the app: its installation (and token) is deleted.
    assert await slack.event({"type": "app_uninstalled"}) == 200

    def none_left() -> bool:
        with sqlite3.connect(database) as conn:
            (left,) = conn.execute("SELECT COUNT(*) FROM installations").fetchone()
        return bool(left == 0)

    await waiting.eventually(none_left, what="the installation deleted")
