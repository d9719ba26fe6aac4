"""The gateway's file, parsed once at start: each mistake one sentence naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.mcp_gateway import GatewayConfigError, load_gateway_file
from bot.app.settings import load_settings

UPSTREAM = '[[upstreams]]\nname = "ops"\ncommand = ["ops"]\n'


def _refused(tmp_path: Path, text: str, *, name: str = "gateway.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(GatewayConfigError) as refused:
        load_gateway_file(path)
    sentence = str(refused.value)
    assert "\n" not in sentence
    return sentence


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[upstreams]]\nname = "ops"\n', "upstreams.0: give exactly one of command"),
        ('[[upstreams]]\nname = "o.ps"\ncommand = ["x"]\n', "upstreams.0.name"),
        (UPSTREAM + UPSTREAM, "two upstreams are named 'ops'"),
        (UPSTREAM + '[[rules]]\ntools = "*"\naction = "maybe"\n', "rules.0.action"),
        (UPSTREAM + '[[rules]]\ntools = "*"\naction = "deny"\nroute = "slack:C1"\n', "route"),
        (UPSTREAM + '[[rules]]\ntools = "*"\naction = "allow"\nquorum = 2\n', "quorum"),
        (UPSTREAM + '[[rules]]\ntools = "*"\naction = "approve"\nroute = "nowhere"\n', "route"),
        (UPSTREAM + '[[rules]]\ntools = "*"\naction = "approve"\nttl_seconds = 5\n', "ttl"),
        (UPSTREAM + "[gateway]\nwait = 5\n", "gateway.wait: is not a field"),
    ],
)
def test_a_file_the_gateway_cannot_use_is_one_sentence_naming_the_field(
    tmp_path: Path, text: str, said: str
) -> None:
    """Each mistake: one line, starting with the setting, naming what is wrong."""
    sentence = _refused(tmp_path, text)
    assert sentence.startswith("BOT_MCP_GATEWAY=") and said in sentence, sentence


def test_a_variable_the_environment_lacks_is_named_and_no_value_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """${VAR} unset: the sentence names the variable; a set one's value appears nowhere."""
    monkeypatch.delenv("OPS_TOKEN", raising=False)
    monkeypatch.setenv("OTHER", "s3cret-value")
    text = (
        '[[upstreams]]\nname = "ops"\nurl = "https://mcp.example.com/mcp"\n'
        'headers = { Authorization = "Bearer ${OPS_TOKEN}", X = "${OTHER}" }\n'
    )
    sentence = _refused(tmp_path, text)
    assert "${OPS_TOKEN}" in sentence and "s3cret-value" not in sentence, sentence


def test_json_is_read_as_toml_is(tmp_path: Path) -> None:
    """A .json file: the same fields, parsed the same way."""
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"upstreams": [{"name": "ops", "url": "http://127.0.0.1:9/mcp"}]}))
    assert load_gateway_file(path).upstreams[0].url == "http://127.0.0.1:9/mcp"


def test_the_files_secrets_are_among_the_secrets_the_log_hides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A header's and an env value's secrets join Settings.secrets(), the log filter's list."""
    monkeypatch.setenv("OPS_TOKEN", "tok-" + "x" * 20)
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[[upstreams]]\nname = "ops"\ncommand = ["ops"]\nenv = { T = "${OPS_TOKEN}" }\n\n'
        '[[upstreams]]\nname = "gh"\nurl = "https://mcp.example.com/mcp"\n'
        'headers = { Authorization = "Bearer ${OPS_TOKEN}" }\n'
    )
    settings = load_settings(BOT_MCP_GATEWAY=str(path), BOT_DATA_DIR=str(tmp_path / "var"))
    hidden = settings.secrets()
    assert "tok-" + "x" * 20 in hidden and "Bearer tok-" + "x" * 20 in hidden
    # The header's token alone too, as a log line might carry it.
    path.write_text(path.read_text().replace('env = { T = "${OPS_TOKEN}" }\n', ""))
    alone = load_settings(BOT_MCP_GATEWAY=str(path), BOT_DATA_DIR=str(tmp_path / "var"))
    assert "tok-" + "x" * 20 in alone.secrets()
