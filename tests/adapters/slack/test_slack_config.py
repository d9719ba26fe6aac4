"""Slack settings: each mistake is one line naming the variable; check says what is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.slack.settings import SlackSettings
from bot.app.probes import Probe, slack_unreachable
from bot.app.settings import SettingsError, load_settings
from tests.support import ROOT, bare_bot_env, clean_environment, run_bot

# Every variable Slack's settings read, and who may answer there, as the settings name them.
SLACK_VARIABLES = SlackSettings.variables() | {"SLACK_ANSWERERS", "BOT_ANSWERERS"}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_environment(monkeypatch, tmp_path, SLACK_VARIABLES)


def test_slack_is_off_by_default_and_the_api_url_is_slacks() -> None:
    settings = load_settings()
    assert settings.slack.mode is None
    assert settings.slack.api_url == "https://slack.com/api/"


@pytest.mark.parametrize(
    ("given", "mode"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}, "one workspace, HTTP"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}, "one workspace, Socket Mode"),
        (
            {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c", "SLACK_SIGNING_SECRET": "s"},
            "OAuth, many workspaces, HTTP",
        ),
    ],
)
def test_the_three_ways_to_run_slack(given: dict[str, str], mode: str) -> None:
    assert (load_settings(**given).slack.mode or "").startswith(mode)


@pytest.mark.parametrize(
    ("given", "names"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
        ({"SLACK_CLIENT_ID": "1.2", "SLACK_SIGNING_SECRET": "s"}, "SLACK_CLIENT_SECRET"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-wrong"}, "xapp-"),
        (
            {
                "SLACK_BOT_TOKEN": "x",
                "SLACK_SIGNING_SECRET": "s",
                "SLACK_CLIENT_ID": "1",
                "SLACK_CLIENT_SECRET": "c",
            },
            "not both",
        ),
        ({"SLACK_API_URL": "slack.com/api"}, "SLACK_API_URL"),
        ({"SLACK_ANSWERERS": "approval"}, "SLACK_ANSWERERS"),
        ({"BOT_ANSWERERS": "approval"}, "BOT_ANSWERERS"),
        ({"SLACK_BOT_TOKEN": " "}, "SLACK_BOT_TOKEN"),
    ],
)
def test_each_slack_mistake_is_one_line(given: dict[str, str], names: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(**given)
    assert len(raised.value.lines) == 1
    assert names in raised.value.lines[0]


def test_the_api_url_gets_its_trailing_slash() -> None:
    assert load_settings(SLACK_API_URL="https://slack-gov.com/api").slack.api_url == (
        "https://slack-gov.com/api/"
    )


def test_check_asks_slack_and_says_when_it_cannot(tmp_path: Path) -> None:
    """`python -m bot check` calls auth.test: unreachable, that is one line and exit 2.

    (tests/test_cli.py runs it against the fake Slack: ok, and refused tokens.)
    """
    result = run_bot(
        "check",
        env=bare_bot_env(
            tmp_path,
            SLACK_BOT_TOKEN="xoxb-1",
            SLACK_APP_TOKEN="xapp-1",
            SLACK_API_URL="http://127.0.0.1:9/api/",
        ),
        cwd=ROOT,
    )
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(
        "configuration error: SLACK_API_URL: cannot reach Slack at http://127.0.0.1:9/api/ "
        "for auth.test ("
    ), line
    assert "xoxb-1" not in result.stdout + result.stderr


def test_slack_unreachable_at_its_default_address_blames_no_setting() -> None:
    """No answer from Slack's default address names no setting; a set SLACK_API_URL is named."""
    said = "cannot reach Slack at https://slack.com/api/ for auth.test (x); check the network"
    tokens = {"SLACK_BOT_TOKEN": "xoxb-your-token", "SLACK_APP_TOKEN": "xapp-your-token"}
    default = load_settings(**tokens).slack
    assert slack_unreachable(default, said) == Probe(problem=said)
    chosen = load_settings(**tokens, SLACK_API_URL="http://127.0.0.1:9/api/").slack
    assert slack_unreachable(chosen, said).variable == "SLACK_API_URL"
