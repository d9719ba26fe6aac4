"""`python -m bot` as a user types it: each command in a subprocess, from a clean folder."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from adapters.teams.settings import SDK_NAMES
from tests.e2e._server import free_port
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, TEAM, FakeSlack
from tests.loopback import serving
from tests.support import run_text

ROOT = Path(__file__).resolve().parents[1]
TEAMS_PAGE = (ROOT / "docs" / "teams.md").read_text()
PLACEHOLDERS = {
    "<app id>": "00000000-0000-4000-8000-000000000001",
    "<client secret>": "not-a-real-client-secret",
    "<tenant id>": "00000000-0000-4000-8000-000000000002",
    "<your-host>": "bot.example.com",
}


def bot(
    cwd: Path, *words: str, env: dict[str, str] | None = None, flags: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    return run_text(
        [sys.executable, *flags, "-m", "bot", *words], cwd=cwd, env={**base, **(env or {})}
    )


def filled(text: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        text = text.replace(placeholder, value)
    return text


def test_help_lists_every_command_and_keeps_the_package_flags_to_their_command(
    tmp_path: Path,
) -> None:
    for words in (["--help"], ["help"]):
        done = bot(tmp_path, *words)
        assert done.returncode == 0, done.stderr
        for command in ("serve", "check", "keygen", "teams-package", "admin", "help"):
            assert re.search(rf"^\s+{command}\s", done.stdout, re.M), (command, done.stdout)
        assert "--website" not in done.stdout
    package = bot(tmp_path, "teams-package", "--help")
    assert package.returncode == 0
    assert "--website" in package.stdout and "--version" in package.stdout


def test_version_flag_prints_the_package_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    done = bot(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"python -m bot {version('chatops-hitl-bridge')}"


def test_admin_help_flags_show_the_admin_commands(tmp_path: Path) -> None:
    for flag in ("--help", "-h"):
        done = bot(tmp_path, "admin", flag)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "pending" in done.stdout and "cancel <question-id>" in done.stdout


def teams_block(after: str) -> str:
    """The first ```sh block after the heading or text ``after`` on docs/teams.md."""
    rest = TEAMS_PAGE[TEAMS_PAGE.index(after) :]
    match = re.search(r"```sh\n(.*?)```", rest, re.S)
    assert match is not None
    return "\n".join(line.strip() for line in match.group(1).splitlines())


@pytest.fixture
async def token_endpoint() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    """A loopback Bot Framework token endpoint: a token for docs/teams.md's id and secret."""
    asked: list[dict[str, str]] = []

    async def token(request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        asked.append(form)
        if form.get("client_secret") != PLACEHOLDERS["<client secret>"]:
            return web.json_response({"error": "invalid_client"}, status=401)
        return web.json_response({"access_token": "t", "expires_in": 3600})

    app = web.Application()
    app.router.add_post("/{tenant}/oauth2/v2.0/token", token)
    async with serving(app, free_port()) as url:
        yield f"{url}/{PLACEHOLDERS['<tenant id>']}", asked


async def in_thread(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(bot, *args, **kwargs)


async def test_the_teams_pages_steps_work_as_pasted(
    tmp_path: Path, token_endpoint: tuple[str, list[dict[str, str]]]
) -> None:
    """Step 5's .env, then `check` (which asks for a bot token), then the package command."""
    login, asked = token_endpoint
    step5 = teams_block("## Register the bot in Azure")
    heredoc = re.search(r"<<'ENV'\n(.*?)\nENV\n", step5, re.S)
    assert heredoc is not None
    (tmp_path / ".env").write_text(filled(heredoc.group(1)) + "\n")
    check_line = step5[heredoc.end() :].split("#")[0].split()
    assert check_line[:3] == [".venv/bin/python", "-m", "bot"]
    # The one addition: the token endpoint is a loopback stand-in for Microsoft's.
    cloud = {"TO_CHANNEL_FROM_BOT_LOGIN_URL": login}
    checked = await in_thread(tmp_path, *check_line[3:], env=cloud)
    assert checked.returncode == 0, checked.stderr
    app_id = PLACEHOLDERS["<app id>"]
    via = f"via {SDK_NAMES['botbuilder']} (BOT_TEAMS_SDK=botbuilder)"
    teams_line = f"teams:    app {app_id} (SingleTenant) on /api/messages {via}; bot token ok"
    assert teams_line in checked.stdout
    assert [a["client_id"] for a in asked] == [app_id]

    package_line = filled(teams_block("## Upload the app")).split()
    assert package_line[:3] == [".venv/bin/python", "-m", "bot"]
    (tmp_path / ".env").write_text(f"MicrosoftAppId={app_id}\n")  # the id alone: no secret
    packaged = await in_thread(tmp_path, *package_line[3:])
    assert packaged.returncode == 0, packaged.stderr
    with zipfile.ZipFile(tmp_path / "var" / "teams-app.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["id"] == app_id and manifest["version"] == "1.0.0"


async def test_check_says_when_the_teams_secret_is_refused(
    tmp_path: Path, token_endpoint: tuple[str, list[dict[str, str]]]
) -> None:
    login, _ = token_endpoint
    env = {
        "MicrosoftAppId": "a1",
        "MicrosoftAppPassword": "the-wrong-secret",
        "TO_CHANNEL_FROM_BOT_LOGIN_URL": login,
    }
    done = await in_thread(tmp_path, "check", env=env)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("configuration error: MicrosoftAppPassword: the token endpoint refused")
    assert "the-wrong-secret" not in line


@pytest.mark.parametrize(
    ("tokens", "verdict"),
    [
        ({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}, "ok"),
        ({"SLACK_BOT_TOKEN": "xoxb-fake", "SLACK_APP_TOKEN": APP_TOKEN}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": "xapp-fake"}, "SLACK_APP_TOKEN"),
    ],
)
async def test_check_asks_slack_whether_the_tokens_work(
    tmp_path: Path, tokens: dict[str, str], verdict: str
) -> None:
    """`check` calls auth.test and apps.connections.open: fake tokens are one line, exit 2."""
    slack = await FakeSlack().start()
    try:
        env = {**tokens, "SLACK_API_URL": slack.api_url}
        done = await in_thread(tmp_path, "check", env=env)
    finally:
        await slack.close()
    assert {c.method for c in slack.calls} <= {"auth.test", "apps.connections.open"}
    if verdict == "ok":
        assert done.returncode == 0, done.stderr
        assert (
            f"slack:    one workspace, Socket Mode; auth.test ok (team {TEAM}, bot bot); "
            "apps.connections.open ok"
        ) in done.stdout
    else:
        assert done.returncode == 2
        [line] = done.stderr.splitlines()
        assert line.startswith(f"configuration error: {verdict}: Slack refused it (invalid_auth)")


def test_the_package_version_is_a_flag(tmp_path: Path) -> None:
    app_id = PLACEHOLDERS["<app id>"]
    words = ["teams-package", "--website", "https://bot.example.com", "--app-id", app_id]
    done = bot(tmp_path, *words, "--version", "1.4.2", "--out", "app.zip")
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "app.zip") as archive:
        assert json.loads(archive.read("manifest.json"))["version"] == "1.4.2"
    bad = bot(tmp_path, *words, "--version", "latest")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_python_without_the_dependencies_gets_one_sentence(tmp_path: Path) -> None:
    """-S drops site-packages: what `python3 -m bot` outside the venv meets."""
    done = bot(ROOT, "admin", "pending", flags=("-S",), env={"DATABASE_URL": "sqlite:///x"})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert ".venv/bin/python -m bot" in done.stderr


def without_asyncpg(tmp_path: Path) -> str:
    shim = tmp_path / "shim" / "asyncpg"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        "raise ModuleNotFoundError('No module named asyncpg', name='asyncpg')\n"
    )
    return f"{shim.parent}{os.pathsep}{ROOT}"


def test_admin_on_sqlite_never_needs_asyncpg_and_postgres_without_it_is_one_line(
    tmp_path: Path,
) -> None:
    path = without_asyncpg(tmp_path)
    sqlite = {"PYTHONPATH": path, "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}"}
    done = bot(tmp_path, "admin", "pending", env=sqlite)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "No open questions" in done.stdout
    postgres = {"PYTHONPATH": path, "DATABASE_URL": "postgresql://u@127.0.0.1:1/x"}
    done = bot(tmp_path, "admin", "pending", env=postgres)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "asyncpg" in done.stderr and "Traceback" not in done.stderr


def bad_places(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder").mkdir()
    return {
        "sys": "/sys/nope",
        "proc": "/proc/nope/deeper",
        "file": str(tmp_path / "a-file"),
        "folder": str(tmp_path / "a-folder"),
    }


@pytest.mark.parametrize("place", ["sys", "proc", "file"])
@pytest.mark.parametrize("command", ["check", "serve"])
def test_an_unusable_data_dir_is_one_line_and_exit_2(
    tmp_path: Path, place: str, command: str
) -> None:
    env = {"BOT_DATA_DIR": bad_places(tmp_path)[place], "BOT_LOG_LEVEL": "ERROR"}
    done = bot(tmp_path, command, env={**env, "PORT": str(free_port())})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("configuration error: BOT_DATA_DIR=")


@pytest.mark.parametrize("place", ["sys", "proc", "folder"])
@pytest.mark.parametrize("command", ["check", "serve"])
def test_an_unusable_sqlite_path_is_one_line_and_exit_2(
    tmp_path: Path, place: str, command: str
) -> None:
    env = {
        "DATABASE_URL": f"sqlite:///{bad_places(tmp_path)[place]}",
        "BOT_DATA_DIR": str(tmp_path / "var"),
        "BOT_LOG_LEVEL": "ERROR",
        "PORT": str(free_port()),
    }
    done = bot(tmp_path, command, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("configuration error: DATABASE_URL: ")


@pytest.mark.parametrize(
    ("variable", "value"),
    [("SLACK_SIGNING_SECRET", "a-secret"), ("SLACK_APP_TOKEN", "xapp-1-fake")],
)
def test_half_a_slack_configuration_is_a_warning(tmp_path: Path, variable: str, value: str) -> None:
    done = bot(tmp_path, "check", env={variable: value})
    assert done.returncode == 0, done.stderr
    [warning] = done.stderr.splitlines()
    assert warning.startswith(f"warning: {variable} set without SLACK_BOT_TOKEN")
    assert "slack:    not configured" in done.stdout


def test_a_misspelt_variable_gets_one_warning_naming_the_closest(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TEAMS_APP_PASWORD=x\n")
    done = bot(tmp_path, "check", env={"BOT_CONSOL": "false", "BOT_TEST_POSTGRES_URL": "x"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "warning: BOT_CONSOL is not a setting this bot reads, so it is ignored; "
        "did you mean BOT_CONSOLE?",
        "warning: TEAMS_APP_PASWORD is not a setting this bot reads, so it is ignored; "
        "did you mean TEAMS_APP_PASSWORD?",
    ]


def test_a_near_miss_of_an_unprefixed_setting_gets_one_warning(tmp_path: Path) -> None:
    """DATABASE_ULR (in .env) and POTR are warned about, naming the setting meant; other
    unprefixed names in the environment are not."""
    (tmp_path / ".env").write_text("DATABASE_ULR=sqlite:///elsewhere.sqlite3\n")
    done = bot(tmp_path, "check", env={"POTR": "8080", "PGPORT": "5432", "DATABASE": "x"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "warning: DATABASE_ULR is not a setting this bot reads, so it is ignored; "
        "did you mean DATABASE_URL?",
        "warning: POTR is not a setting this bot reads, so it is ignored; did you mean PORT?",
    ]


def test_make_help_lists_the_targets_and_the_first_install_says_what_it_does(
    tmp_path: Path,
) -> None:
    helped = subprocess.run(
        ["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert helped.returncode == 0, helped.stderr
    for target in ("run", "test", "check", "lint", "bench", "clean"):
        assert re.search(rf"^  {target} +\S", helped.stdout, re.M), target
    # A fresh venv: the recipe announces itself and pip is not silenced.
    fresh = subprocess.run(
        ["make", "-n", "run", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert "first run only, about a minute" in fresh.stdout
    install = next(line for line in fresh.stdout.splitlines() if "-e '.[dev]'" in line)
    assert "--quiet" not in install


def test_make_clean_removes_each_npm_tools_node_modules() -> None:
    """`make clean` removes the venv and every npm tool's node_modules, and nothing at the root."""
    dry = subprocess.run(
        ["make", "-n", "clean"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert dry.returncode == 0, dry.stderr
    removed = dry.stdout.split()
    assert "tests/conformance/node_modules" in removed
    assert "tests/adaptivecards/node_modules" in removed
    assert "tests/mcp_gateway_client/node_modules" in removed
    assert "/node_modules" not in removed


def test_check_from_another_folder_names_the_store_and_data_folder_it_uses(
    tmp_path: Path,
) -> None:
    """`check` on the default (relative) settings names the store file and the data folder
    as absolute paths, and the folder it was started in."""
    done = bot(tmp_path, "check")
    assert done.returncode == 0, done.stderr
    var = tmp_path / "var"
    assert f"store:    SQLite file {var / 'bot.sqlite3'} (spends" in done.stdout
    assert f"data:     {var} (started in {tmp_path})" in done.stdout


def test_check_says_which_missing_folders_it_created(tmp_path: Path) -> None:
    env = {
        "BOT_DATA_DIR": str(tmp_path / "typo" / "keys"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db-folder' / 'bot.sqlite3'}",
    }
    done = bot(tmp_path, "check", env=env)
    assert done.returncode == 0, done.stderr
    assert f"created:  {tmp_path / 'typo' / 'keys'}/ (it did not exist)" in done.stdout
    assert f"created:  {tmp_path / 'db-folder'}/ (it did not exist)" in done.stdout
    again = bot(tmp_path, "check", env=env)
    assert "created:" not in again.stdout


@pytest.mark.parametrize(
    ("policies", "said"),
    [
        (
            {"aproval": {"quorum": 2}},
            "BOT_POLICIES: 'aproval' is not an interaction this agent asks "
            "(it asks: approval, ask_user); use one of those names",
        ),
        (
            {"approval": {"quorum": "two"}},
            "BOT_POLICIES: the policy of 'approval': quorum: Input should be a valid integer",
        ),
    ],
)
def test_a_policy_for_no_interaction_or_a_bad_one_is_one_line(
    tmp_path: Path, policies: dict[str, Any], said: str
) -> None:
    """A misspelt interaction in BOT_POLICIES is refused, not kept unapplied; the variable is
    named once."""
    for command in ("check", "serve"):
        env = {"BOT_POLICIES": json.dumps(policies), "PORT": str(free_port())}
        done = bot(tmp_path, command, env=env)
        assert done.returncode == 2, done.stderr
        line = done.stderr.splitlines()[-1]
        assert line.startswith(f"configuration error: {said}"), line
        assert line.count("BOT_POLICIES") == 1


TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
AAD = "6b0f1e9a-4c2d-4e1f-8a3b-5d6e7f809a1b"


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        (
            "BOT_POLICIES",
            json.dumps({"approval": {"requester": 'email:"ana"@example.com'}}),
            "BOT_POLICIES: the policy of 'approval': requester: "
            "'email:\"ana\"@example.com' is not one plain email address; write email:",
        ),
        (
            "BOT_ADMINS",
            f"teams:contoso:{AAD}",
            f"BOT_ADMINS: 'teams:contoso:{AAD}' is not a Teams user id; write teams:",
        ),
        (
            "BOT_APPROVERS",
            "email:<ana@example.com>",
            "BOT_APPROVERS: 'email:<ana@example.com>' is not one plain email address",
        ),
        (
            "SLACK_ANSWERERS",
            f"approval=teams:{TENANT}:{{{AAD}}}",
            f"SLACK_ANSWERERS: 'teams:{TENANT}:{{{AAD}}}' is not a Teams user id",
        ),
    ],
)
def test_a_setting_naming_a_person_no_surface_signs_is_one_line(
    tmp_path: Path, variable: str, value: str, said: str
) -> None:
    """An email or Teams id with no one spelling in a setting stops the start, saying how."""
    done = bot(tmp_path, "check", env={variable: value, "PORT": str(free_port())})
    assert done.returncode == 2, done.stderr
    line = done.stderr.splitlines()[-1]
    assert line.startswith(f"configuration error: {said}"), line


@pytest.mark.parametrize("given", ["--app-id", "MicrosoftAppId"])
def test_teams_package_refuses_an_app_id_that_is_not_a_guid(tmp_path: Path, given: str) -> None:
    """`teams-package` with an app id Teams would refuse at upload is one line, exit 2."""
    words = ["teams-package", "--website", "https://bot.example.com", "--out", "app.zip"]
    if given == "--app-id":
        done = bot(tmp_path, *words, "--app-id", "not-a-guid")
    else:
        done = bot(tmp_path, *words, env={"MicrosoftAppId": "not-a-guid"})
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    prefix = "usage error" if given == "--app-id" else "configuration error"
    said = f"{prefix}: {given}: 'not-a-guid' is not an app id; copy the Azure"
    assert line.startswith(said), line
    assert not (tmp_path / "app.zip").exists()


def test_a_key_name_both_in_bot_api_keys_and_the_store_refuses_to_start(tmp_path: Path) -> None:
    """`serve` with a BOT_API_KEYS entry named as a stored key refuses before it says it
    serves: one line, exit 2."""
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}",
        "BOT_DATA_DIR": str(tmp_path / "var"),
        "BOT_LOG_LEVEL": "INFO",
        "BOT_LOG_FORMAT": "text",
        "PORT": str(free_port()),
    }
    made = bot(tmp_path, "api-key", "create", "ci", "--route", "console:*", env=env)
    assert made.returncode == 0, made.stderr
    listed = json.dumps([{"name": "ci", "key": "c" * 40, "routes": ["console:*"]}])
    done = bot(tmp_path, "serve", env={**env, "BOT_API_KEYS": listed})
    assert done.returncode == 2, done.stderr
    assert "serving on" not in done.stderr
    line = done.stderr.splitlines()[-1]
    assert line == (
        "configuration error: BOT_API_KEYS and the store both hold a key named 'ci'; remove it "
        "from BOT_API_KEYS or revoke the stored one (python -m bot api-key revoke ci)"
    )


def test_keygen_webhook_prints_a_secret_the_bridge_loads_and_signs_with(tmp_path: Path) -> None:
    """``keygen --webhook``: a new ``whsec_`` secret each time, loaded and used to sign."""
    from standardwebhooks.webhooks import Webhook

    from bot.app.settings import load_settings
    from bot.webhooks._signing import signed_headers

    printed = [bot(tmp_path, "keygen", "--webhook") for _ in range(2)]
    assert [done.returncode for done in printed] == [0, 0], printed[0].stderr
    first, second = (done.stdout.strip() for done in printed)
    assert first.startswith("whsec_") and first != second
    assert load_settings(BOT_WEBHOOK_SECRET=first).webhooks.enabled
    body = b'{"type": "question.answered"}'
    headers = signed_headers(first, message_id="msg_1", timestamp=time.time(), body=body)
    assert Webhook(first).verify(body, headers) == {"type": "question.answered"}
