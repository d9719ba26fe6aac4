"""docs/agents/mcp-gateway.md as pasted: its key command, its upstream server, its gateway
file, its client configs, its bridge command, its Python agent, and the sentences it says
the model reads.

The agent runs as written against the real app on a loopback port, with the key the page's
block makes, a real ``python -m bot mcp-gateway`` over stdio in front of the page's own
upstream server, and the approval answered on the console page. Only what cannot be literal
here is filled in: the bridge's URL, the key, the interpreter, and where the files are.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from adapters.mcp.settings import McpSettings
from adapters.mcp_gateway import load_gateway_file
from adapters.mcp_gateway._gateway import NO_ONE_ANSWERED, PENDING, REJECTED
from adapters.mcp_gateway.settings import GatewaySettings
from bot.app.settings import known_variables, unknown_variables
from tests.adapters.agent_docs import made_key, page_env, process
from tests.doors._doors import Door
from tests.e2e._client import NAME, ConsoleClient, approve_while_it_waits

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "agents" / "mcp-gateway.md"
TEXT = PAGE.read_text()
INSTALL, BRIDGE = re.findall(r"```sh\n(.*?)```", TEXT, re.S)
[UPSTREAM] = [b for b in re.findall(r"```python\n(.*?)```", TEXT, re.S) if "MCPServer" in b]
[AGENT] = [b for b in re.findall(r"```python\n(.*?)```", TEXT, re.S) if "mcp-gateway" in b]
[FILE] = re.findall(r"```toml\n(.*?)```", TEXT, re.S)
CONFIGS = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", TEXT, re.S)]
SAID = re.findall(r"```text\n(.*?)\n```", TEXT, re.S)
PAGE_URL = "http://127.0.0.1:3978"
PAGE_KEY = "hitl_..."
PAGE_PYTHON = ".venv/bin/python"
CONVERSATION = "ops"


def _filled(text: str, **values: str) -> str:
    for literal, value in values.items():
        assert text.count(literal) >= 1, literal
        text = text.replace(literal, value)
    return text


def page_files(folder: Path) -> Path:
    """The page's upstream server and gateway file, written to ``folder``; the file's path."""
    server = folder / "ops_server.py"
    server.write_text(UPSTREAM)
    file = folder / "gateway.toml"
    file.write_text(
        FILE.replace(f'"{PAGE_PYTHON}"', json.dumps(sys.executable)).replace(
            '"ops_server.py"', json.dumps(str(server))
        )
    )
    return file


def test_the_file_parses_as_the_gateway_reads_it(tmp_path: Path) -> None:
    """The page's gateway file, comments and all, is a file the gateway takes."""
    config = load_gateway_file(page_files(tmp_path))
    assert [rule.action for rule in config.rules] == ["approve", "deny"]
    assert tomllib.loads(FILE)["upstreams"][0]["command"][0] == PAGE_PYTHON


@pytest.mark.parametrize("config", CONFIGS, ids=["mcpServers", "vscode"])
def test_the_client_configs_start_the_gateway_with_settings_the_bot_reads(
    config: dict[str, Any],
) -> None:
    """Each client config runs `python -m bot mcp-gateway` with BOT_* names the bot reads."""
    [server] = (config.get("mcpServers") or config["servers"]).values()
    assert server["command"].endswith(PAGE_PYTHON) and server["args"] == [
        "-m",
        "bot",
        "mcp-gateway",
    ]
    env: dict[str, str] = server["env"]
    assert set(env) <= known_variables() and not unknown_variables(env)
    assert GatewaySettings.model_validate(env).file is not None
    settings = McpSettings.model_validate(env)
    assert settings.bridge_url and settings.api_key and settings.route and settings.answerers


def test_the_bridge_command_names_settings_the_bot_reads() -> None:
    """The `... make run` line for /mcp/gateway: every name is a setting."""
    *assignments, command, target = BRIDGE.split()
    assert (command, target) == ("make", "run")
    names = [a.split("=", 1)[0] for a in assignments]
    assert "BOT_MCP_GATEWAY" in names and not unknown_variables(names)


def test_the_sentences_the_page_quotes_are_the_gateways() -> None:
    """The model's view on reject, timeout and pending, as the page quotes it."""
    rejected, expired, pending = SAID
    assert rejected == REJECTED.format(
        who="Rejected by ana.", comment=" Their comment: freeze until Monday"
    )
    assert expired == NO_ONE_ANSWERED.format(id="q_...", status="expired")
    assert pending == PENDING.format(id="q_...", route="console:ops")


async def _agent(door: Door, tmp_path: Path, answer: dict[str, Any]) -> str:
    """The page's agent, answered on the console with ``answer``: what it printed."""
    [key_line] = [line for line in INSTALL.splitlines() if "api-key create" in line]
    key = await made_key(key_line, page_env(tmp_path, door.db))
    code = _filled(
        AGENT,
        **{
            PAGE_URL: f"http://127.0.0.1:{door.port}",
            PAGE_KEY: key,
            f'"{PAGE_PYTHON}"': repr(sys.executable),
            '"gateway.toml"': repr(str(page_files(tmp_path))),
            # The gateway's journal in this test's folder, not the checkout's var/.
            '"BOT_MCP_ROUTE"': f'"BOT_DATA_DIR": {str(tmp_path / "gw")!r}, "BOT_MCP_ROUTE"',
        },
    )
    script = await process([sys.executable, "-c", code], page_env(tmp_path, door.db))
    assert door.session is not None
    console = ConsoleClient(door.session, f"http://127.0.0.1:{door.port}")
    out, _ = await approve_while_it_waits(script, console, CONVERSATION, answer)
    return out


async def test_the_agent_runs_the_deploy_once_approved(tmp_path: Path) -> None:
    """Approve: the read-only call printed at once, the deploy the upstream's result."""
    async with Door(tmp_path) as door:
        printed = await _agent(door, tmp_path, {"decision": "approve"})
    assert printed == "web is up\nresult: deployed web 1.5\n"


async def test_the_agent_reads_a_rejection_as_the_page_says(tmp_path: Path) -> None:
    """Reject with a comment: the sentence the page quotes, with the console's name."""
    reject = {"decision": "reject", "comment": "freeze until Monday"}
    async with Door(tmp_path) as door:
        printed = await _agent(door, tmp_path, reject)
    rejected = SAID[0].replace("Rejected by ana.", f"Rejected by {NAME}.")
    assert printed == f"web is up\nerror: {rejected}\n"
