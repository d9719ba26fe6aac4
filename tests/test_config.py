"""Settings: defaults, one clear line per mistake, and the signing-key rules."""

from __future__ import annotations

import logging
import stat
from pathlib import Path
from typing import get_args

import pytest
from pydantic import SecretStr

from bot.app.settings import Settings, load_settings
from bot.component_settings import Hidden
from bot.human.signing import KEY_FILE, signer_from
from bot.human.tokens import SigningConfigError, TokenSigner
from bot.logs import JsonFormatter, RedactingFilter
from tests.support import bare_bot_env, clean_environment, refused_settings, run_bot


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    names = ("PORT", "BOT_HOST", "DATABASE_URL", "BOT_SIGNING_KEYS", "BOT_CONSOLE_PASSWORD")
    clean_environment(monkeypatch, tmp_path, names)


def test_defaults_are_the_embedded_local_setup() -> None:
    """No environment: port 3978, loopback, SQLite under var/, console on."""
    settings = load_settings()
    assert (settings.serving.port, settings.serving.host) == (3978, "127.0.0.1")
    assert settings.store.url == "sqlite:///var/bot.sqlite3"
    assert settings.console.enabled and settings.serving.is_local


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"PORT": "http"}, "PORT: Input should be a valid integer"),
        ({"BOT_TTL_SECONDS": "0"}, "BOT_TTL_SECONDS: Input should be greater than 0"),
        ({"DATABASE_URL": "mysql://db"}, "DATABASE_URL: use sqlite:///"),
        ({"BOT_HOST": "0.0.0.0"}, "set BOT_CONSOLE_PASSWORD, or BOT_CONSOLE=false"),  # noqa: S104
        ({"OPENAI_BASE_URL": "http://127.0.0.1:9"}, "without OPENAI_API_KEY"),
        ({"BOT_AGENT": "not a path"}, "BOT_AGENT: String should match pattern"),
        ({"BOT_CONSOLE_PASSWORD": "  "}, "BOT_CONSOLE_PASSWORD: is set but blank"),
        ({"BOT_LINK_SIGNIN": "true"}, "BOT_LINK_SIGNIN=true asks whoever opens an answer link"),
        (
            {"BOT_LINK_SIGNIN": "true", "BOT_CONSOLE_PASSWORD": "a shared password"},
            "but BOT_CONSOLE_USERS names no one",
        ),
        ({"BOT_LINK_FRAME_ANCESTORS": "*"}, "BOT_LINK_FRAME_ANCESTORS entry '*' is not an origin"),
    ],
)
def test_each_mistake_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], expected: str
) -> None:
    """A bad value is reported by variable name, not as a traceback."""
    lines = refused_settings(monkeypatch, environment)
    assert any(line.startswith(expected) or expected in line for line in lines)


def test_overrides_are_named_by_variable_and_a_stray_name_is_refused() -> None:
    """load_settings(PORT=...) sets that variable; a name nothing reads is a TypeError."""
    assert load_settings(PORT="4000").serving.port == 4000
    with pytest.raises(TypeError, match="port"):
        load_settings(port=4000)


def test_every_secret_setting_is_marked_so_the_log_filter_gets_it() -> None:
    """Each component's SecretStr settings are hidden, and every configured one is handed over."""
    settings = load_settings()
    for part in (getattr(settings, name) for name in type(settings).model_fields):
        for name, field in type(part).model_fields.items():
            if SecretStr in get_args(field.annotation):
                assert any(isinstance(mark, Hidden) for mark in field.metadata), name
    secrets = {
        "BOT_SIGNING_KEYS": "k1:" + "s" * 40,
        "BOT_CONSOLE_PASSWORD": "console password",
        "OPENAI_API_KEY": "sk-model-key-123",
        "MicrosoftAppPassword": "teams app secret",
        "SLACK_BOT_TOKEN": "xoxb-bot-token",
        "SLACK_SIGNING_SECRET": "slack signing secret",
        "SLACK_APP_TOKEN": "xapp-app-token",
        "SLACK_CLIENT_SECRET": "slack client secret",
        "SLACK_INSTALLATION_KEY": "slack installation key",
        "BOT_WEBHOOK_SECRET": "whsec_" + "d2ViaG9vay1zZWNyZXQtb2YtMjQtYnl0ZXMh",
    }
    hidden = load_settings(MicrosoftAppId="app-1", **secrets).secrets()
    assert set(secrets.values()) | {"s" * 40} <= set(hidden)


def test_the_cli_reports_a_bad_setting_in_one_line_and_exits_2(tmp_path: Path) -> None:
    """`python -m bot check` with a bad PORT prints one line and no traceback."""
    result = run_bot(
        "check",
        env={"PORT": "http", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path.cwd())},
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "configuration error: PORT: Input should be a valid integer, unable to parse string "
        "as an integer"
    ]


def test_check_prints_the_enabled_store_and_surfaces(tmp_path: Path) -> None:
    """`python -m bot check` names the store, the signing source and the console."""
    root = Path(__file__).resolve().parents[1]
    result = run_bot(
        "check",
        env=bare_bot_env(tmp_path),
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    store = tmp_path / "bot.sqlite3"
    assert f"store:    SQLite file {store} (spends shared across processes: True)" in result.stdout
    assert "console:  http://127.0.0.1:3978/" in result.stdout


def test_the_generated_key_is_private_and_stable(tmp_path: Path) -> None:
    """Without keys, one random key is made (0600) and reused on the next start."""
    settings = load_settings(BOT_DATA_DIR=str(tmp_path / "data"))
    first = _signer(settings)
    second = _signer(settings)
    path = tmp_path / "data" / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first._signing.signing == second._signing.signing
    other = _signer(load_settings(BOT_DATA_DIR=str(tmp_path / "elsewhere")))
    assert other._signing.signing != first._signing.signing


def test_configured_keys_win_and_weak_ones_are_refused() -> None:
    """BOT_SIGNING_KEYS is used as given; a short secret is a configuration error."""
    signer = _signer(load_settings(BOT_SIGNING_KEYS="new:" + "n" * 40 + ",old:" + "o" * 40))
    assert signer._signing.kid == "new"
    with pytest.raises(SigningConfigError, match="shorter than 32"):
        _signer(load_settings(BOT_SIGNING_KEYS="k:short"))


def test_logs_never_carry_tokens_or_secrets() -> None:
    """The redaction filter rewrites JWT-shaped strings and configured secrets."""
    token = "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJpbnQifQ.c2lnbmF0dXJlc2lnbmF0dXJl"
    record = logging.makeLogRecord(
        {"msg": "answer with %s using key %s", "args": (token, "supersecretvalue1")}
    )
    RedactingFilter(["supersecretvalue1"]).filter(record)
    line = JsonFormatter().format(record)
    assert token not in line
    assert "supersecretvalue1" not in line
    assert "[token]" in line and "[secret]" in line


def test_a_slack_setting_that_starts_nothing_is_warned_about() -> None:
    from adapters.slack.settings import SlackSettings

    assert SlackSettings(SLACK_SIGNING_SECRET="s").warnings() != []
    assert SlackSettings(SLACK_APP_TOKEN="xapp-1").warnings() != []
    both = SlackSettings(SLACK_APP_TOKEN="xapp-1", SLACK_BOT_TOKEN="xoxb-1")
    assert both.warnings() == []


def test_unknown_variables_name_the_closest_known_one() -> None:
    from bot.app.settings import unknown_variables

    assert unknown_variables(["BOT_CONSOLE", "PATH", "BOT_TEST_POSTGRES_URL"]) == []
    [line] = unknown_variables(["SLACK_BOT_TOKNE"])
    assert line.endswith("did you mean SLACK_BOT_TOKEN?")
    [line] = unknown_variables(["BOT_ZZZZZZZZZZZZZ"])
    assert "did you mean" not in line


def test_env_example_names_every_setting_and_nothing_else() -> None:
    """.env.example lists each component's variables (commented out), no unknown names."""
    import re
    from pathlib import Path

    from bot.app.settings import _components, known_variables

    text = (Path(__file__).resolve().parents[1] / ".env.example").read_text()
    named = set(re.findall(r"^# ?([A-Za-z_]+)=", text, re.M))
    primary = {f.alias for kind in _components().values() for f in kind.model_fields.values()}
    assert primary <= named, sorted(primary - named)
    assert named <= known_variables(), sorted(named - known_variables())


def test_a_prefixed_name_of_an_unprefixed_setting_is_pointed_at_it() -> None:
    """BOT_PORT is PORT: the hint names the setting the person meant, not a look-alike."""
    from bot.app.settings import unknown_variables

    assert unknown_variables(["BOT_PORT", "BOT_DATABASE_URL", "PORT"]) == [
        "BOT_DATABASE_URL is not a setting this bot reads, so it is ignored; "
        "did you mean DATABASE_URL?",
        "BOT_PORT is not a setting this bot reads, so it is ignored; did you mean PORT?",
    ]


def _signer(settings: Settings) -> TokenSigner:
    return signer_from(settings.signing, shared_store=settings.store.shared)


def test_the_old_name_of_bot_answerers_still_works_with_a_warning(tmp_path: Path) -> None:
    """SLACK_ANSWERERS is read as BOT_ANSWERERS (which wins), with one line saying to rename."""
    from bot.service.answering.outcomes import Responder

    env = tmp_path / "none.env"
    old = load_settings(SLACK_ANSWERERS="approval=anyone")
    assert old.policy.build(admins=()).answerers("approval").anyone
    assert [line for line in old.warnings({}, env) if "ANSWERERS" in line] == [
        "SLACK_ANSWERERS is the old name of BOT_ANSWERERS, which governs every surface; "
        "rename it (BOT_ANSWERERS wins when both are set)"
    ]
    new = load_settings(BOT_ANSWERERS="approval=UBO")
    policy = new.policy.build(admins=())
    assert policy.answerers("approval").names(Responder("slack:T1:UBO").id)
    assert [line for line in new.warnings({}, env) if "ANSWERERS" in line] == []
    both = load_settings(BOT_ANSWERERS="approval=UBO", SLACK_ANSWERERS="approval=anyone")
    assert not both.policy.build(admins=()).answerers("approval").anyone
