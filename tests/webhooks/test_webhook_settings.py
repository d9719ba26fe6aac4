"""BOT_WEBHOOK_*: a malformed secret is refused in one line, the secret is hidden everywhere."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.app.settings import SettingsError, load_settings
from bot.webhooks import random_webhook_secret, webhook_key
from tests.support import run_bot

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "malformed",
    [
        "c2VjcmV0LXdpdGhvdXQtcHJlZml4LTEyMzQ1Njc4OTA=",  # no whsec_ prefix
        "whsec_not*base64!",
        "whsec_c2hvcnQ=",  # "short": fewer than 24 bytes
        "whsec_",
    ],
)
def test_a_malformed_secret_is_refused_at_load_in_one_line(malformed: str) -> None:
    """The line names the variable and says how to make one, without repeating the value."""
    with pytest.raises(SettingsError) as raised:
        load_settings(BOT_WEBHOOK_SECRET=malformed)
    [line] = raised.value.lines
    assert line.startswith("BOT_WEBHOOK_SECRET: is whsec_ followed by the base64 of")
    assert line.endswith("generate one with python -m bot keygen --webhook")
    key = malformed.removeprefix("whsec_")
    assert not key or key not in line


def test_a_blank_secret_is_refused_as_blank() -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(BOT_WEBHOOK_SECRET="  ")
    assert raised.value.lines == [
        "BOT_WEBHOOK_SECRET: is set but blank; give it a value or unset it"
    ]


def test_a_generated_secret_loads_and_is_hidden_from_repr_and_listed_as_secret() -> None:
    """Both the whole secret and its key part are handed to the log filter."""
    secret = random_webhook_secret()
    assert webhook_key(secret) is not None and len(webhook_key(secret) or b"") == 32
    settings = load_settings(BOT_WEBHOOK_SECRET=secret)
    webhooks = settings.webhooks
    assert webhooks.enabled and not webhooks.allow_private
    assert webhooks.timeout_seconds == 10
    assert secret not in repr(webhooks) and secret not in repr(settings)
    assert secret not in str(settings.model_dump())
    hidden = settings.secrets()
    assert secret in hidden and secret.removeprefix("whsec_") in hidden


def test_webhooks_are_off_by_default_and_private_targets_refused() -> None:
    settings = load_settings()
    assert settings.webhooks.enabled is False and settings.webhooks.mode is None
    assert settings.webhooks.allow_private is False


@pytest.mark.parametrize("value", ["0", "-1", "31", "soon"])
def test_the_timeout_is_positive_and_at_most_thirty_seconds(value: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(BOT_WEBHOOK_TIMEOUT_SECONDS=value)
    [line] = raised.value.lines
    assert line.startswith("BOT_WEBHOOK_TIMEOUT_SECONDS: ")


def test_allowing_private_targets_without_a_secret_is_a_warning() -> None:
    settings = load_settings(BOT_WEBHOOK_ALLOW_PRIVATE="true")
    assert settings.webhooks.allow_private is True
    assert [line for line in settings.warnings({}) if "WEBHOOK" in line] == [
        "BOT_WEBHOOK_ALLOW_PRIVATE is set without BOT_WEBHOOK_SECRET, so webhooks are off; "
        "set the secret, or unset it"
    ]


def _check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_bot(
        "check",
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": f"sqlite:///{tmp_path}/bot.sqlite3",
            "BOT_DATA_DIR": str(tmp_path / "var"),
            **env,
        },
        cwd=tmp_path,
    )


def test_check_says_whether_webhooks_are_on(tmp_path: Path) -> None:
    """`python -m bot check` prints one webhooks line, on or off, never the secret."""
    off = _check(tmp_path)
    assert off.returncode == 0, off.stderr
    assert "webhooks: off (set BOT_WEBHOOK_SECRET to sign callbacks)" in off.stdout.splitlines()
    secret = random_webhook_secret()
    on = _check(tmp_path, BOT_WEBHOOK_SECRET=secret, BOT_WEBHOOK_TIMEOUT_SECONDS="5")
    assert on.returncode == 0, on.stderr
    assert (
        "webhooks: signed with BOT_WEBHOOK_SECRET, public addresses only, 5 s timeout"
        in on.stdout.splitlines()
    )
    assert secret not in on.stdout + on.stderr


def test_check_refuses_a_malformed_secret_in_one_line_without_echoing_it(tmp_path: Path) -> None:
    malformed = "whsec_c2hvcnQtYW5kLXNlY3JldA=="
    done = _check(tmp_path, BOT_WEBHOOK_SECRET=malformed)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("configuration error: BOT_WEBHOOK_SECRET: is whsec_ followed by")
    assert "c2hvcnQtYW5kLXNlY3JldA" not in done.stdout + done.stderr
