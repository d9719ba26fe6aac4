"""Choosing PostgreSQL: the URL is accepted, never echoed, and needs explicit signing keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import create_app
from bot.app.settings import SettingsError, load_settings
from bot.human.tokens import SigningConfigError
from bot.stores.url import is_shared
from tests.support import run_bot

ROOT = Path(__file__).resolve().parents[2]
URL = "postgresql://bot:hunter2@db.internal:5432/bot"


@pytest.mark.parametrize("url", [URL, "postgres://bot@db/bot"])
def test_both_postgres_schemes_are_accepted_and_shared(url: str) -> None:
    """postgresql:// and postgres:// (Heroku's spelling) both select the shared store."""
    settings = load_settings(DATABASE_URL=url, BOT_SIGNING_KEYS="k1:" + "s" * 48)
    assert settings.store.url == url
    assert is_shared(url)


def test_an_unknown_scheme_is_refused_without_echoing_the_url() -> None:
    """The refusal names DATABASE_URL and the accepted forms, never the value."""
    with pytest.raises(SettingsError) as raised:
        load_settings(DATABASE_URL="mysql://bot:hunter2@db/bot")
    assert "DATABASE_URL" in str(raised.value) and "postgresql://" in str(raised.value)
    assert "hunter2" not in str(raised.value)


def test_the_pool_settings_are_validated() -> None:
    """A zero pool or a negative timeout is refused at start, naming the variable."""
    with pytest.raises(SettingsError, match="BOT_PG_POOL_SIZE"):
        load_settings(BOT_PG_POOL_SIZE="0")
    with pytest.raises(SettingsError, match="BOT_PG_STATEMENT_TIMEOUT_SECONDS"):
        load_settings(BOT_PG_STATEMENT_TIMEOUT_SECONDS="-1")


def test_a_shared_store_without_signing_keys_is_refused_before_anything_opens(
    tmp_path: Path,
) -> None:
    """create_app refuses it at once (no connection is tried: the host does not exist)."""
    settings = load_settings(DATABASE_URL=URL, BOT_DATA_DIR=str(tmp_path))
    with pytest.raises(SigningConfigError, match="BOT_SIGNING_KEYS is required"):
        create_app(settings)
    assert not (tmp_path / "signing-key").exists()  # no local key was generated instead


def test_serving_a_shared_store_without_keys_exits_2_with_one_line(tmp_path: Path) -> None:
    """`python -m bot` prints one configuration line (no URL, no traceback) and exits 2."""
    env = {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": URL,
        "BOT_DATA_DIR": str(tmp_path),
        "PORT": "1",
    }
    done = run_bot(cwd=ROOT, env=env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "BOT_SIGNING_KEYS is required" in lines[0]
    assert "hunter2" not in done.stderr + done.stdout
