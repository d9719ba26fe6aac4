"""Web API failures: retry no sooner than Retry-After, or stop and say what to fix, once."""

from __future__ import annotations

import logging

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack._errors import ErrorLog, delivery_error, error_code


def api_error(
    error: str, *, status: int = 200, headers: dict[str, str] | None = None
) -> SlackApiError:
    response = AsyncSlackResponse(
        client=None,  # type: ignore[arg-type]
        http_verb="POST",
        api_url="http://127.0.0.1/api/chat.postMessage",
        req_args={},
        data={"ok": False, "error": error},
        headers=headers or {},
        status_code=status,
    )
    return SlackApiError(error, response)


def test_a_rate_limit_is_retried_after_slacks_retry_after() -> None:
    failure = delivery_error(
        api_error("ratelimited", status=429, headers={"Retry-After": "7"}), method="chat.update"
    )
    assert not failure.permanent and failure.retry_after == 7.0


@pytest.mark.parametrize("error", ["internal_error", "service_unavailable", "fatal_error"])
def test_slacks_own_trouble_is_retried(error: str) -> None:
    failure = delivery_error(api_error(error, status=503), method="chat.postMessage")
    assert not failure.permanent and failure.retry_after == 1.0


@pytest.mark.parametrize(
    ("error", "fix"),
    [
        ("invalid_auth", "reinstall the app"),
        ("channel_not_found", "invite the bot"),
        ("not_in_channel", "/invite"),
        ("msg_too_long", "report this bug"),
        ("some_new_error", "Slack's API reference"),
    ],
)
def test_everything_else_is_permanent_and_names_the_fix(error: str, fix: str) -> None:
    failure = delivery_error(api_error(error), method="chat.postMessage")
    assert failure.permanent and failure.retry_after is None
    assert fix in failure.reason and error_code(failure.reason) == error
    assert failure.reason.count(".") >= 1 and "\n" not in failure.reason


def test_a_connection_failure_is_transient() -> None:
    failure = delivery_error(aiohttp.ClientConnectionError("reset"), method="chat.update")
    assert not failure.permanent and "could not reach Slack" in failure.reason


def test_each_permanent_error_is_logged_once_per_workspace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors = ErrorLog()
    with caplog.at_level(logging.DEBUG, logger="adapters.slack._errors"):
        for team in ("T1", "T1", "T1", "T2"):
            errors.permanent(team, "chat.postMessage", "invalid_auth", "invalid_auth; fix it.")
    loud = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.__dict__["team"] for r in loud] == ["T1", "T2"]
