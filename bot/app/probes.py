"""What ``python -m bot check`` asks the outside world: does each configured key work?

Slack: ``auth.test`` with the bot token and, for Socket Mode,
``apps.connections.open`` with the app token. Teams: the Bot Framework's
token endpoint with the app id and secret (the client-credentials grant
the bot uses before each send). Email: one SMTP session (TLS as the URL
says, and the sign-in when it names a user), closed without sending. Each
probe returns ``Probe``: a few words for the ``check`` line, or the variable
to fix and what is wrong, in one line. No probe echoes a secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import aiosmtplib

from adapters.email.settings import EmailSettings, untrusted_certificate
from adapters.slack.settings import SlackSettings
from adapters.teams.settings import PUBLIC_OAUTH_SCOPE, TOKEN_ENDPOINT_PATH, TeamsSettings

TIMEOUT = aiohttp.ClientTimeout(total=10)
_REFUSED = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}
)


@dataclass(frozen=True, slots=True)
class Probe:
    detail: str = ""
    variable: str = ""
    problem: str = ""


async def probe_slack(slack: SlackSettings) -> Probe:
    """``auth.test`` (one workspace) and ``apps.connections.open`` (Socket Mode)."""
    details = []
    if slack.bot_token is not None:
        answer = await _slack_call(slack.api_url, "auth.test", slack.bot_token.get_secret_value())
        if isinstance(answer, str):
            return slack_unreachable(slack, answer)
        if not answer.get("ok"):
            error = str(answer.get("error", "unknown"))
            fix = (
                "copy the Bot User OAuth Token (xoxb-...) from Install App again"
                if error in _REFUSED
                else "check the token and the app's installation"
            )
            return Probe(variable="SLACK_BOT_TOKEN", problem=f"Slack refused it ({error}); {fix}")
        details.append(
            f"auth.test ok (team {answer.get('team_id', '?')}, bot {answer.get('user', '?')})"
        )
    if slack.app_token is not None:
        token = slack.app_token.get_secret_value()
        answer = await _slack_call(slack.api_url, "apps.connections.open", token)
        if isinstance(answer, str):
            return slack_unreachable(slack, answer)
        if not answer.get("ok"):
            error = str(answer.get("error", "unknown"))
            return Probe(
                variable="SLACK_APP_TOKEN",
                problem=f"Slack refused it ({error}); generate an app-level token with the "
                "connections:write scope (Basic Information -> App-Level Tokens)",
            )
        details.append("apps.connections.open ok")
    return Probe(detail="; ".join(details))


def slack_unreachable(slack: SlackSettings, problem: str) -> Probe:
    """No answer from Slack: SLACK_API_URL is named only when the person set it, since
    the default address is not theirs to fix (the network is)."""
    chosen = "api_url" in slack.model_fields_set
    return Probe(variable="SLACK_API_URL" if chosen else "", problem=problem)


async def _slack_call(api_url: str, method: str, token: str) -> dict[str, Any] | str:
    """Slack's JSON answer, or one sentence saying why there is none."""
    try:
        async with (
            aiohttp.ClientSession(timeout=TIMEOUT) as session,
            session.post(
                api_url + method, headers={"Authorization": f"Bearer {token}"}
            ) as response,
        ):
            if response.status == 429:
                return f"Slack at {api_url} rate-limited {method} (HTTP 429); try again in a minute"
            answer = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as error:
        reason = type(error).__name__ if isinstance(error, TimeoutError) else str(error)
        return f"cannot reach Slack at {api_url} for {method} ({reason}); check the network"
    return answer if isinstance(answer, dict) else f"Slack at {api_url}{method} did not answer JSON"


async def probe_teams(teams: TeamsSettings) -> Probe:
    """A bot token from the Bot Framework's token endpoint, as the bot gets one to send."""
    if not teams.app_id or teams.app_password is None:
        return Probe()  # emulator mode, or a managed identity: nothing to ask for here
    url = teams.login_url_or_default()
    if not url.endswith(TOKEN_ENDPOINT_PATH):
        url = url.rstrip("/") + TOKEN_ENDPOINT_PATH
    scope = (teams.oauth_scope or PUBLIC_OAUTH_SCOPE).rstrip("/")
    form = {
        "grant_type": "client_credentials",
        "client_id": teams.app_id,
        "client_secret": teams.app_password.get_secret_value(),
        "scope": f"{scope}/.default",
    }
    try:
        async with (
            aiohttp.ClientSession(timeout=TIMEOUT) as session,
            session.post(url, data=form) as response,
        ):
            status = response.status
            answer = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as error:
        reason = type(error).__name__ if isinstance(error, TimeoutError) else str(error)
        # Nothing answered, so the secret was never judged: blame the address, not it.
        return Probe(
            variable="TO_CHANNEL_FROM_BOT_LOGIN_URL",
            problem=f"cannot reach the Bot Framework token endpoint {url} ({reason}); check "
            "the network (or this setting, when you point it at your own endpoint)",
        )
    if status == 200 and isinstance(answer, dict) and answer.get("access_token"):
        return Probe(detail="bot token ok")
    said = str(answer.get("error", f"HTTP {status}")) if isinstance(answer, dict) else str(status)
    return Probe(
        variable="MicrosoftAppPassword",
        problem=f"the token endpoint refused the app id and secret ({said}); check "
        "MicrosoftAppId, the client secret's value (not its id) and MicrosoftAppTenantId",
    )


async def probe_smtp(email: EmailSettings) -> Probe:
    """One session with the SMTP server: connect, TLS as asked, sign in, quit; sends nothing."""
    server = email.server()
    if server is None:
        return Probe()
    client = aiosmtplib.SMTP(
        hostname=server.host,
        port=server.port,
        use_tls=server.security == "tls",
        start_tls=server.security == "starttls",
        timeout=min(email.timeout_seconds, 10.0),
    )
    try:
        await client.connect()
        if server.username and server.password:
            await client.login(server.username, server.password)
        await client.quit()
    except aiosmtplib.SMTPAuthenticationError as error:
        return Probe(
            variable="BOT_SMTP_URL",
            problem=f"the SMTP server refused the user and password ({error.code}); check them",
        )
    except aiosmtplib.SMTPResponseException as error:
        return Probe(
            variable="BOT_SMTP_URL",
            problem=f"the SMTP server answered {error.code} {error.message}; check the URL",
        )
    except (aiosmtplib.SMTPException, OSError) as error:
        certificate = untrusted_certificate(error)
        if certificate:
            where = f"{server.host}:{server.port}"
            return Probe(variable="BOT_SMTP_URL", problem=f"TLS with {where} failed: {certificate}")
        return Probe(
            variable="BOT_SMTP_URL",
            problem=f"cannot reach {server.host}:{server.port} ({error}); check the host and port",
        )
    finally:
        client.close()
    signed = f", signed in as {server.username}" if server.username else ""
    return Probe(detail=f"session ok{signed}")
