"""Socket Mode: the bot dials a loopback WebSocket that speaks Slack's envelope protocol."""

from __future__ import annotations

import aiohttp
import pytest

from tests import waiting
from tests.e2e._server import StartBot
from tests.e2e._slack import ALICE, text_of
from tests.fakes.slack_api import (
    APP_TOKEN,
    BOT_TOKEN,
    FakeSlack,
    buttons,
    event_callback,
    first_button_click,
    mention,
)

pytestmark = pytest.mark.e2e


async def connected(fake: FakeSlack, *, seconds: float = 15.0) -> None:
    await waiting.eventually(
        lambda: fake.sockets, what="the bot opening a Socket Mode connection", seconds=seconds
    )


async def test_events_and_clicks_arrive_over_socket_mode_and_are_acked(
    fake: FakeSlack, start_bot: StartBot
) -> None:
    """hello, an events_api envelope (mention), an interactive one (click): both acked."""
    bot = await start_bot(
        SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN, SLACK_API_URL=fake.api_url
    )
    await connected(fake)
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{bot.url}/slack/events", data="{}") as response,
    ):
        # Socket Mode only: nobody can post events over HTTP without a signing secret.
        assert response.status == 404
    opened = fake.of("apps.connections.open")
    assert opened and opened[0].token == APP_TOKEN

    sent = await fake.send_envelope("events_api", event_callback(mention("deploy web", user=ALICE)))
    ack = await fake.ack_for(sent)
    assert set(ack) == {"envelope_id"} or not ack.get("payload")
    ask = (await fake.wait_for("chat.postMessage", where=lambda c: bool(buttons(c.args))))[0]

    click = await fake.send_envelope("interactive", first_button_click(ask, user=ALICE))
    await fake.ack_for(click)
    edited = (await fake.wait_for("chat.update"))[0]
    assert f"Answered by <@{ALICE}>" in text_of(edited) and not buttons(edited.args)
    bot.close()  # drop the link before the fake shuts down


async def test_a_refused_app_token_stops_the_bot_with_one_line(
    fake: FakeSlack, start_bot: StartBot
) -> None:
    """apps.connections.open says invalid_auth: exit 2 with what to do, no traceback."""
    fake.fail("apps.connections.open", "invalid_auth")
    with pytest.raises(RuntimeError, match="exited with 2") as raised:
        await start_bot(
            SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN, SLACK_API_URL=fake.api_url
        )
    assert "SLACK_APP_TOKEN was refused by Slack (invalid_auth)" in str(raised.value)
    assert "Traceback" not in str(raised.value)
