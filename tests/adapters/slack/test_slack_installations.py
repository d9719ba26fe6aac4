"""Installations are encrypted at rest, keys rotate, and the OAuth state cannot be forged."""

from __future__ import annotations

import time

import pytest
from slack_sdk.oauth.installation_store import Installation

from adapters.slack._installations import EncryptedInstallationStore, SignedStateStore, fernet_for
from bot.stores.ports import Stores

TOKEN = "xoxb-secret-bot-token"


def installation() -> Installation:
    return Installation(
        app_id="A1",
        team_id="T1",
        bot_token=TOKEN,
        bot_id="B1",
        bot_user_id="UBOT",
        bot_scopes="chat:write,commands",
        user_id="UADMIN",
        installed_at=time.time(),
    )


async def test_an_installation_round_trips_encrypted(stores: Stores) -> None:
    """Saved, found by team, never stored in clear, gone after delete (SQLite and PostgreSQL)."""
    store = EncryptedInstallationStore(fernet_for("key-one"))
    store.port = stores.installations
    await store.async_save(installation())
    bot = await store.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None and bot.bot_token == TOKEN and bot.bot_user_id == "UBOT"
    found = await store.async_find_installation(enterprise_id=None, team_id="T1")
    assert found is not None and found.user_id == "UADMIN"
    for key in ("bot:-:T1", "installation:-:T1:latest"):
        blob = await stores.installations.find("slack", key)
        assert blob is not None and TOKEN not in blob
    assert await store.async_find_bot(enterprise_id=None, team_id="T2") is None
    await store.async_delete_all(enterprise_id=None, team_id="T1")
    assert await store.async_find_bot(enterprise_id=None, team_id="T1") is None
    assert await store.async_find_installation(enterprise_id=None, team_id="T1") is None


async def test_keys_rotate_and_a_lost_key_reads_nothing(
    stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    old = EncryptedInstallationStore(fernet_for("old-key"))
    old.port = stores.installations
    await old.async_save(installation())
    rotated = EncryptedInstallationStore(fernet_for("new-key,old-key"))
    rotated.port = stores.installations
    assert (await rotated.async_find_bot(enterprise_id=None, team_id="T1")) is not None
    lost = EncryptedInstallationStore(fernet_for("another-key"))
    lost.port = stores.installations
    assert await lost.async_find_bot(enterprise_id=None, team_id="T1") is None
    assert "SLACK_INSTALLATION_KEY changed" in caplog.text and TOKEN not in caplog.text


async def test_the_oauth_state_is_signed_and_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    states = SignedStateStore("secret")
    state = await states.async_issue()
    assert await states.async_consume(state)
    assert not await SignedStateStore("other").async_consume(state)
    nonce, issued, signature = state.split(".")
    assert not await states.async_consume(f"{nonce}.{int(issued) - 1}.{signature}")
    assert not await states.async_consume("garbage")
    monkeypatch.setattr(time, "time", lambda: int(issued) + 3600)
    assert not await states.async_consume(state)


def test_the_install_page_sends_people_to_the_configured_slack() -> None:
    from adapters.slack._installations import authorization_url

    assert authorization_url("https://slack.com/api/") == "https://slack.com/oauth/v2/authorize"
    assert authorization_url("https://slack-gov.com/api/") == (
        "https://slack-gov.com/oauth/v2/authorize"
    )
