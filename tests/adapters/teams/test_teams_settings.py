"""Teams settings: Bot Framework names and TEAMS_ aliases, emulator mode only on loopback."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from adapters.teams.settings import SDK_NAMES, TeamsSettings
from bot.__main__ import main
from bot.app.settings import load_settings
from tests.support import (
    ROOT,
    TEAMS_SDKS,
    bare_bot_env,
    clean_environment,
    refused_settings,
    run_bot,
)

# Every variable Teams' settings read (the Bot Framework's names and their TEAMS_ aliases), and
# the bind address emulator mode depends on.
TEAMS_NAMES = TeamsSettings.variables() | {"BOT_HOST"}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_environment(monkeypatch, tmp_path, TEAMS_NAMES)


@pytest.mark.parametrize("prefix", ["Microsoft", "TEAMS_"])
def test_bot_framework_names_and_teams_aliases_both_work(
    monkeypatch: pytest.MonkeyPatch, prefix: str
) -> None:
    """MicrosoftAppId/... and TEAMS_APP_ID/... configure the same settings."""
    names = {
        "Microsoft": (
            "MicrosoftAppId",
            "MicrosoftAppPassword",
            "MicrosoftAppType",
            "MicrosoftAppTenantId",
        ),
        "TEAMS_": ("TEAMS_APP_ID", "TEAMS_APP_PASSWORD", "TEAMS_APP_TYPE", "TEAMS_APP_TENANT_ID"),
    }[prefix]
    for name, value in zip(names, ("app-1", "secret", "SingleTenant", "tenant-1"), strict=True):
        monkeypatch.setenv(name, value)
    settings = load_settings()
    teams = settings.teams
    assert teams.app_id == "app-1"
    assert teams.app_password is not None
    assert teams.app_password.get_secret_value() == "secret"
    assert (teams.app_type, teams.app_tenant_id) == ("SingleTenant", "tenant-1")
    assert settings.teams_enabled and not settings.teams_emulator


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"MicrosoftAppId": "a"}, "MicrosoftAppId is set without MicrosoftAppPassword"),
        (
            {
                "MicrosoftAppId": "a",
                "MicrosoftAppPassword": "p",
                "MicrosoftAppType": "SingleTenant",
            },
            "MicrosoftAppType=SingleTenant needs MicrosoftAppTenantId",
        ),
        (
            {
                "BOT_TEAMS": "on",
                "BOT_HOST": "0.0.0.0",  # noqa: S104
                "BOT_CONSOLE": "false",
                "BOT_PUBLIC_URL": "https://bot.example.com",
            },
            "BOT_TEAMS=on without MicrosoftAppId would accept unauthenticated",
        ),
        ({"MicrosoftAppType": "Personal"}, "MicrosoftAppType: Input should be"),
    ],
)
def test_each_teams_mistake_is_one_line(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], expected: str
) -> None:
    """Missing secret, tenant, or emulator mode on a public bind: refused at start."""
    lines = refused_settings(monkeypatch, environment)
    assert any(expected in line for line in lines), lines


def test_emulator_mode_is_for_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No app id: emulator mode on 127.0.0.1; off (not unauthenticated) on a public bind."""
    assert load_settings().teams_emulator
    monkeypatch.setenv("BOT_HOST", "0.0.0.0")  # noqa: S104
    monkeypatch.setenv("BOT_CONSOLE", "false")
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.com")
    public = load_settings()
    assert not public.teams_enabled and not public.teams_emulator


@pytest.mark.parametrize("sdk", TEAMS_SDKS)
def test_check_says_whether_teams_is_configured_and_on_which_sdk(tmp_path: Path, sdk: str) -> None:
    """`python -m bot check` prints the Teams line, naming the SDK; with an app id it asks
    the token endpoint for a bot token, on either SDK.

    (tests/test_cli.py answers that request: "bot token ok", and a refused secret.)
    """
    unreachable = {
        "MicrosoftAppId": "app-9",
        "MicrosoftAppPassword": "p-secret",
        "TO_CHANNEL_FROM_BOT_LOGIN_URL": "http://127.0.0.1:9/tenant",
    }
    results = [
        run_bot("check", env=bare_bot_env(tmp_path, BOT_TEAMS_SDK=sdk, **extra), cwd=ROOT)
        for extra in ({}, unreachable)
    ]
    emulator, configured = results
    assert emulator.returncode == 0, emulator.stderr
    assert (
        "teams:    emulator mode on /api/messages (no MicrosoftAppId: unauthenticated, "
        f"loopback only) via {SDK_NAMES[sdk]} (BOT_TEAMS_SDK={sdk})"
    ) in emulator.stdout.splitlines()
    assert configured.returncode == 2
    [line] = configured.stderr.splitlines()
    # A network failure never judged the secret: the line names the address to check.
    assert line.startswith(
        "configuration error: TO_CHANNEL_FROM_BOT_LOGIN_URL: cannot reach the Bot Framework "
        "token endpoint http://127.0.0.1:9/tenant"
    ), line
    assert "MicrosoftAppPassword" not in line
    assert "p-secret" not in line


def test_teams_package_command_writes_the_zip(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`python -m bot teams-package` needs the app id and a site, and writes the zip."""
    out = tmp_path / "app.zip"
    argv = ["teams-package", "--out", str(out), "--website", "https://bot.example.com"]
    assert main(argv) == 2
    monkeypatch.setenv("MicrosoftAppId", "11111111-2222-3333-4444-555555555555")
    monkeypatch.setenv("MicrosoftAppPassword", "p")
    assert main([*argv[:3], "--website", "http://insecure"]) == 2
    assert main(argv) == 0
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == ["color.png", "manifest.json", "outline.png"]
