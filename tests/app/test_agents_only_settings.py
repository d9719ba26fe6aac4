"""``BOT_AGENT=none``: the bridge runs no chat agent; `check` and the settings say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from bot.app.root import agent_spec
from bot.app.settings import load_settings
from bot.service.answering.outcomes import ChatsOff, Responder
from bot.service.delivering.messages import AGENTS_ONLY
from bot.service.delivering.surfaces import Conversation
from bot.service.running.runs import RUN_SERVICE
from tests.support import app_server, bare_bot_env, run_bot


def test_none_is_agents_only_and_the_demo_stays_the_default() -> None:
    """``none`` loads as agents only with no tools; unset is still the demo."""
    agents = load_settings(BOT_AGENT="none")
    assert not agents.run.chats
    spec = agent_spec(agents)
    assert spec.name == "none" and list(spec.tools) == []
    assert {r.name for r in spec.registrations} == {"ask_user", "approval", "form"}
    demo = load_settings()
    assert demo.run.chats and agent_spec(demo).name == "ops-demo"


async def test_a_chat_message_stores_nothing_and_is_told_agents_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run service refuses a start before any write; the console says the sentence."""
    monkeypatch.chdir(tmp_path)
    server = app_server(tmp_path, BOT_AGENT="none")
    async with TestClient(server) as client:
        response = await client.post(
            "/api/conversations/ops/messages",
            data=json.dumps({"text": "deploy web"}),
            headers={"Content-Type": "application/json"},
        )
        assert response.status == 403
        assert (await response.json())["error"] == AGENTS_ONLY
        service = client.app[RUN_SERVICE]
        where = Conversation(surface="console", scope="console", key="ops")
        with pytest.raises(ChatsOff):
            await service.start(where, Responder("ana", "Ana"), "deploy web", key="m1")
        assert await service.history("console", "ops") == []


def test_check_says_the_bridge_is_agents_only(tmp_path: Path) -> None:
    """`check` names the agent: "none (agents only: ...)", or the demo when unset."""
    done = run_bot("check", env=bare_bot_env(tmp_path, BOT_AGENT="none"))
    assert done.returncode == 0, done.stderr
    assert (
        "agent:    none (agents only: a chat message gets one sentence; agents ask through "
        "/v1 and MCP)"
    ) in done.stdout
    demo = run_bot("check", env=bare_bot_env(tmp_path))
    assert "agent:    ops-demo (scripted)" in demo.stdout
